"""Changed values for must-fail copies of Python tests (copies_python): a value of any
shape drawn as variants draws literals."""

from __future__ import annotations

import re
import secrets
from decimal import Decimal
from typing import Any

from dgm.benchmarks.polyglot.value_draws import LENIENT, NONE, among_inputs, shuffled
from dgm.benchmarks.polyglot.variants import fresh_numbers, from_file, int_run, string_body


def python_value(value: Any, k: int) -> list[Any]:
    """k other Python values of the same shape (fewer for a bool: one), or []."""
    if isinstance(value, bool):
        return NONE if LENIENT.get() else [not value]
    if isinstance(value, (int, float)) and value >= 0:
        selected = among_inputs("num", repr(value), k)
        if selected:
            return [type(value)(t) for t in selected]
    if isinstance(value, int):
        drawn = from_file(str(value), k) if value >= 0 else None
        if drawn is not None:
            return [int(t) for t in drawn]
        run = int_run(value, k)
        return run if fresh_numbers([str(abs(v)) for v in run]) else NONE
    if isinstance(value, float):
        text = repr(value)
        if not re.fullmatch(r"-?\d+\.\d+", text):
            return NONE
        drawn = from_file(text, k) if value >= 0 else None
        if drawn is not None:
            return [float(t) for t in drawn]
        places = len(text.split(".")[1])
        scaled = int(text.replace(".", "").replace("-", "")) * (-1 if value < 0 else 1)
        run = int_run(scaled, k)
        made = [float(Decimal(v).scaleb(-places)) for v in run]
        return made if fresh_numbers([repr(abs(v)) for v in made]) else NONE
    if isinstance(value, str):
        return string_body(value, k)  # (Python's pool holds values: quote "")
    if isinstance(value, bytes):
        if not value:
            return NONE
        i = secrets.randbelow(len(value))
        return [value[:i] + bytes([v]) + value[i + 1 :] for v in int_run(value[i], k)]
    if isinstance(value, (list, tuple)):
        for i in shuffled(list(range(len(value)))):
            found = python_value(value[i], k)
            if found:
                return [type(value)([*value[:i], v, *value[i + 1 :]]) for v in found]
        return NONE
    if isinstance(value, (set, frozenset)):
        for item in shuffled(list(value)):
            found = [v for v in python_value(item, k) if v not in value]
            if found:
                return [type(value)((value - {item}) | {v}) for v in found]
        return NONE
    if isinstance(value, dict):
        for key in shuffled(list(value)):
            found = python_value(value[key], k)
            if found:
                return [{**value, key: v} for v in found]
    return NONE
