"""Writes the record of each call (exchange log lines, usage rows) on a thread of its
own, in order, so disk and SQLite writes never stall the loop serving the agents.

The loop only appends to a deque (no lock, no thread wake-up: that handoff alone cost
more than the rest of a call); the thread drains it every `interval_s`, and at once on
`flush()` or `close()`.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable

log = logging.getLogger(__name__)


class Recorder:
    def __init__(self, interval_s: float = 0.05) -> None:
        self._queue: deque[Callable[[], None]] = deque()
        self._interval_s = interval_s
        self._wake = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="dgm-gateway-recorder", daemon=True)
        self._thread.start()

    def put(self, write: Callable[[], None]) -> None:
        self._queue.append(write)

    def flush(self, timeout_s: float = 30.0) -> None:
        """Return once everything put before this call is written."""
        if self._closed:
            return
        done = threading.Event()
        self._queue.append(done.set)
        self._wake.set()
        done.wait(timeout_s)

    def close(self) -> None:
        """Write what is queued, then stop."""
        self._closed = True
        self._wake.set()
        self._thread.join()

    def _run(self) -> None:
        while True:
            self._wake.wait(self._interval_s)
            self._wake.clear()
            while self._queue:
                write = self._queue.popleft()
                try:
                    write()
                except Exception:  # a full disk or a broken sink must not kill the gateway
                    log.exception("the gateway could not record a call")
            if self._closed and not self._queue:
                return
