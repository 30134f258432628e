"""Click's usage errors as one line with the fix, whichever click typer brings.

typer up to 0.2x used the `click` package; later versions vendor it as `typer._click`
(the base install then has no `click` at all). Both are looked up, so an option typo
says what is wrong and how to fix it, and exits 2, with any typer the bounds allow.
"""

from __future__ import annotations

import difflib
import importlib
from types import ModuleType

USAGE_EXIT = 2


def click_modules() -> list[ModuleType]:
    """The exception modules of every click implementation present."""
    found = []
    for name in ("typer._click.exceptions", "click.exceptions"):
        try:
            found.append(importlib.import_module(name))
        except ImportError:
            continue
    return found


def _classes(name: str) -> tuple[type, ...]:
    return tuple(getattr(m, name) for m in click_modules() if hasattr(m, name))


def _typer_classes(name: str) -> tuple[type, ...]:
    import typer

    extra = getattr(getattr(typer, "exceptions", None), name, None)
    return _classes(name) + ((extra,) if isinstance(extra, type) else ())


def exit_code(exc: BaseException) -> int | None:
    """The code a click `Exit` asks for (--help, --version, completion), else None."""
    if isinstance(exc, _typer_classes("Exit")):
        return int(getattr(exc, "exit_code", 0) or 0)
    return None


def is_abort(exc: BaseException) -> bool:
    return isinstance(exc, _typer_classes("Abort"))


def usage_line(exc: BaseException, prog: str = "dgm") -> tuple[str, int] | None:
    """(one line: problem and fix, exit code) for a click usage error, else None."""
    if not isinstance(exc, _classes("ClickException")):
        return None
    if type(exc).__name__ == "NoArgsIsHelpError":
        return "", getattr(exc, "exit_code", USAGE_EXIT)  # the help was printed already
    message = " ".join(exc.format_message().split())  # type: ignore[attr-defined]
    ctx = getattr(exc, "ctx", None)
    path = getattr(ctx, "command_path", None) or prog
    fix = f"see `{path} --help`"
    command = getattr(ctx, "command", None)
    if message.startswith("No such command") and "Did you mean" not in message and command:
        wanted = message.split("'")[1] if "'" in message else ""
        near = difflib.get_close_matches(wanted, list(getattr(command, "commands", {})), n=1)
        fix = f"did you mean `{path} {near[0]}`? or {fix}" if near else f"{fix} for the commands"
    code = getattr(exc, "exit_code", 1)
    if isinstance(exc, _classes("UsageError")):
        code = USAGE_EXIT
    return f"error: {message} (fix: {fix})", code
