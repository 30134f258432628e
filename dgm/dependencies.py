"""What each benchmark, executor and model backend needs installed, checked before anything
is spent: a missing piece is named with its install command (exit 2), before any image is
built or any job starts, never discovered by every task failing one by one."""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from dgm.errors import DgmError

NEEDS: dict[str, tuple[tuple[str, str], ...]] = {
    "benchmark:swebench": (("swebench", "pip install 'dgm[swebench]'"),),
    "executor:ray": (("ray", "pip install 'dgm[ray]'"),),
    "model:anthropic": (("anthropic", "pip install 'anthropic>=0.40'"),),
    "model:openai": (("openai", "pip install 'openai>=1.40'"),),
    "model:openai-compatible": (("openai", "pip install 'openai>=1.40'"),),
    "report": (("matplotlib", "pip install 'dgm[report]'"),),
}


class MissingDependency(DgmError):
    """A Python package the chosen benchmark, executor or model needs is not installed."""

    exit_code = 2


def importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def needs_of(
    benchmarks: Iterable[str] = (), executor: str | None = None, models: Iterable[str] = ()
) -> list[str]:
    """The NEEDS keys of a benchmark spec (`polyglot,swebench:FILE`), executor and models."""
    keys = [f"benchmark:{b.strip().partition(':')[0]}" for b in benchmarks for b in b.split(",")]
    if executor:
        keys.append(f"executor:{executor}")
    keys += [f"model:{m.partition('/')[0]}" for m in models if m]
    return keys


def require(
    benchmarks: Iterable[str] = (), executor: str | None = None, models: Iterable[str] = ()
) -> None:
    """Raise `MissingDependency` naming every missing package and how to install it."""
    missing: dict[str, tuple[str, list[str]]] = {}
    for key in needs_of(benchmarks, executor, models):
        for module, install in NEEDS.get(key, ()):
            if module in missing or importable(module):
                if module in missing:
                    missing[module][1].append(key)
                continue
            missing[module] = (install, [key])
    if missing:
        what = "; ".join(
            f"{', '.join(k.replace(':', ' ') for k in keys)} needs the Python package "
            f"'{module}', which is not installed"
            for module, (_, keys) in missing.items()
        )
        raise MissingDependency(what, " && ".join(dict.fromkeys(i for i, _ in missing.values())))
