"""API keys never reach a log line, a traceback or an error message.

`scrub(text)` replaces the keys this process holds (the provider variables of
`KEY_VARIABLES`, registered by the gateway and the CLI) and anything shaped like
a provider key. `install()` puts a log-record factory in front of every logger of the
process: each record's message is formatted and scrubbed when it is made, and an attached
traceback is rendered and scrubbed into `exc_text` (its frames and exception reprs can
quote a key; handlers that render `exc_info` themselves get none to render). Uncaught
exceptions, in the main thread or any other, print scrubbed tracebacks too.
"""

from __future__ import annotations

import logging
import re
import threading
import traceback
from collections.abc import Iterable

REDACTED = "[redacted]"
KEY_VARIABLES = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_COMPATIBLE_API_KEY")
"""The environment variables that hold provider keys (read by the gateway's backends)."""
# Provider key shapes (Anthropic sk-ant-..., OpenAI sk-... / sk-proj-...), long enough
# not to hit ordinary words.
KEY_PATTERN = re.compile(r"(?<![A-Za-z0-9])sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}")

_secrets: set[str] = set()
_lock = threading.Lock()
_installed = False


def register(secrets: Iterable[str]) -> None:
    with _lock:
        _secrets.update(s for s in secrets if s and len(s) >= 8)


def scrub(text: str) -> str:
    for secret in sorted(_secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return KEY_PATTERN.sub(REDACTED, text)


def install(secrets: Iterable[str] = ()) -> None:
    """Register `secrets` and scrub every log record of this process from now on."""
    global _installed
    register(secrets)
    with _lock:
        if _installed:
            return
        _installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        _scrub_record(record)
        return record

    logging.setLogRecordFactory(factory)
    _install_excepthooks()


def install_from_environment() -> None:
    """`install()` with the provider keys of this process's environment (the CLI's
    first step, so even a `--debug` traceback before any gateway starts is scrubbed)."""
    import os

    install(os.environ.get(name, "") for name in KEY_VARIABLES)


def _install_excepthooks() -> None:
    """Uncaught exceptions (the main thread's, a thread's) print scrubbed tracebacks."""
    import sys

    def main_hook(kind: type[BaseException], value: BaseException, tb: object) -> None:
        sys.stderr.write(scrub("".join(traceback.format_exception(kind, value, tb))))

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        text = "".join(
            traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback)
        )
        sys.stderr.write(f"Exception in thread {getattr(args.thread, 'name', '?')}:\n{scrub(text)}")

    sys.excepthook = main_hook
    threading.excepthook = thread_hook


def _scrub_record(record: logging.LogRecord) -> None:
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: keep the raw text, scrubbed
        message = f"{record.msg} {record.args}"
    record.msg, record.args = scrub(message), ()
    if record.exc_info and record.exc_info[0] is not None:
        text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        record.exc_text, record.exc_info = scrub(text), None
    elif record.exc_text:
        record.exc_text = scrub(record.exc_text)
    if record.stack_info:
        record.stack_info = scrub(record.stack_info)
