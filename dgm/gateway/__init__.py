"""The LLM gateway: the only way out of a sandbox, with every call counted, capped and
recorded. See README.md in this folder."""

from dgm.gateway.backends import register_script, registered_scripts
from dgm.gateway.backends.base import CallContext
from dgm.gateway.gateway import CONTAINER_SOCKET, Gateway
from dgm.gateway.retry import RetryPolicy
from dgm.gateway.settings import GatewaySettings
from dgm.gateway.socket_dir import short_socket_path
from dgm.gateway.types import (
    BudgetRefused,
    Endpoint,
    JobBinding,
    LLMCallError,
    Tally,
    UpstreamError,
    Usage,
    UsageRecord,
    UsageTotals,
)

__all__ = [
    "CONTAINER_SOCKET",
    "BudgetRefused",
    "CallContext",
    "Endpoint",
    "Gateway",
    "GatewaySettings",
    "JobBinding",
    "LLMCallError",
    "RetryPolicy",
    "Tally",
    "UpstreamError",
    "Usage",
    "UsageRecord",
    "UsageTotals",
    "register_script",
    "registered_scripts",
    "short_socket_path",
]
