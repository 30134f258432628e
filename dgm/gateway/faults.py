"""A simulated provider outage for dry runs and soak tests: while the file named by
`DGM_FAULT_LLM_DOWN` exists, the in-process providers (`scripted/`, `replay/`) answer as a
provider that is down does (HTTP 503, retried, then failed for good), and the gateway's
probe of them fails too. It changes nothing when the variable is unset."""

from __future__ import annotations

import os
from pathlib import Path

from dgm.gateway.types import UpstreamError

ENV = "DGM_FAULT_LLM_DOWN"


def simulated_outage() -> str | None:
    """Why the simulated provider is down now, or None."""
    flag = os.environ.get(ENV)
    if flag and Path(flag).exists():
        return f"HTTP 503: simulated outage ({ENV}={flag})"
    return None


def raise_if_down() -> None:
    down = simulated_outage()
    if down:
        raise UpstreamError(down, status=503, retryable=True)
