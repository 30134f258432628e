"""The `dgm` command line: parses, calls the library, prints.

Each command module of this package contributes its commands through a `register(app)`
function listed in `SUBSYSTEM_CLIS`; this file only wires them up and turns `DgmError`s
into one-line messages with a non-zero exit code.
"""

from __future__ import annotations

import importlib
import sys
from typing import Annotated

import typer

from dgm import __version__, key_redaction
from dgm.commands import usage
from dgm.errors import DgmError

app = typer.Typer(
    name="dgm",
    help="Open-ended self-improvement of coding agents.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion [bash|zsh|fish]
    pretty_exceptions_enable=False,
)

# (module, commands it provides, issue that brings it). A module that does not exist
# yet gets placeholder commands that say so, so the names stay reserved.
SUBSYSTEM_CLIS: list[tuple[str, list[str], str]] = [
    ("dgm.commands.inspect", ["init", "status", "tree", "show", "diff"], "foundation"),
    ("dgm.commands.gateway", ["gateway"], "the LLM gateway"),
    ("dgm.commands.sandbox", ["sandbox"], "the sandbox"),
    ("dgm.commands.evaluate", ["eval", "bench"], "evaluation"),
    ("dgm.commands.audit", ["audit-judge"], "the judge's red team"),
    ("dgm.commands.run", ["run", "resume"], "the meta loop"),
    ("dgm.commands.simulate", ["simulate"], "the strategy simulator"),
    ("dgm.commands.report", ["report", "plot", "export"], "inspection and export"),
    ("dgm.commands.serve", ["serve", "steer"], "the live web app"),
]

_debug = False


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"dgm {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_print_version, help="Print the version."
        ),
    ] = False,
) -> None:
    global _debug
    _debug = debug
    key_redaction.install_from_environment()  # keys out of every log line and traceback


def _reserve(name: str, what: str) -> None:
    @app.command(name, help=f"(not available yet: arrives with {what})", hidden=False)
    def _placeholder() -> None:
        raise DgmError(f"`dgm {name}` is not available in this version yet ({what})")


def _register_all() -> None:
    for module_name, commands, what in SUBSYSTEM_CLIS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not module_name.startswith(exc.name):
                raise
            for name in commands:
                _reserve(name, what)
            continue
        module.register(app)


_register_all()


def main() -> None:
    """Console-script entry point."""
    try:
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:  # typer.Exit(n) returns n here
            sys.exit(code)
    except DgmError as exc:
        if _debug:
            raise
        fix = f" (fix: {exc.hint})" if exc.hint else ""
        typer.secho(key_redaction.scrub(f"error: {exc.message}{fix}"), fg="red", err=True)
        sys.exit(getattr(exc, "exit_code", 1))  # 2: a missing install, as a usage error
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as exc:  # click usage errors and friends
        _exit_for_click(exc)
        if _debug:
            raise
        typer.secho(f"error: {type(exc).__name__}: {exc}", fg="red", err=True)
        typer.echo("  (run with --debug for the traceback)", err=True)
        sys.exit(1)


def _exit_for_click(exc: Exception) -> None:
    """Exit as click would for its own exceptions: one line, code 2 for usage errors."""
    code = usage.exit_code(exc)
    if code is not None:
        sys.exit(code)
    line = usage.usage_line(exc)
    if line is not None:
        if line[0]:
            typer.secho(key_redaction.scrub(line[0]), fg="red", err=True)
        sys.exit(line[1])
    if usage.is_abort(exc):
        typer.echo("aborted", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
