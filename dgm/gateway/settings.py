"""What a gateway is set up with: one frozen record, built from a run's config
(`GatewaySettings.from_config`) or by hand (`dgm gateway`, tests, perf scripts)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dgm.config import JobBudget, Price, RunConfig
from dgm.gateway.retry import RetryPolicy

LOCALHOST = "127.0.0.1"


@dataclass(frozen=True)
class GatewaySettings:
    model: str
    """The model every role uses unless `diagnose_model` names another for `diagnose`."""
    run: str = ""
    log_dir: Path | None = None
    """Where each job's exchanges are logged (`<log_dir>/<job>/llm-<role>.jsonl`)."""
    diagnose_model: str | None = None
    prices: Mapping[str, Price] | None = None
    """$/Mtok (in, out) for models the price table lacks."""
    run_budget_usd: float | None = None
    """The whole run's dollar cap; None: none."""
    spent_usd: float = 0.0
    """What the run spent before (a resumed run), counted against `run_budget_usd`."""
    job_budget: JobBudget = field(default_factory=JobBudget)
    """The default budget of a job bound with `bind_job`."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    host: str = LOCALHOST
    port: int | None = 0
    """`None` serves no TCP (unix sockets only); 0 picks a free port."""
    default_max_tokens: int = 8192
    prompt_caching: bool = True
    context_window_tokens: int | None = None

    @classmethod
    def from_config(
        cls,
        config: RunConfig,
        *,
        run: str,
        log_dir: Path | None,
        spent_usd: float = 0.0,
        port: int | None = 0,
        host: str = LOCALHOST,
    ) -> GatewaySettings:
        """A run's gateway: `[llm]` and `[limits] budget_usd` of its config."""
        llm = config.llm
        return cls(
            llm.model,
            run=run,
            log_dir=log_dir,
            diagnose_model=llm.diagnose_model,
            prices=llm.prices,
            run_budget_usd=config.limits.budget_usd,
            spent_usd=spent_usd,
            job_budget=llm.job_budget,
            retry=RetryPolicy(max_retries=llm.max_retries, timeout_s=llm.timeout_s),
            host=host,
            port=port,
            prompt_caching=llm.prompt_caching,
            context_window_tokens=llm.context_window_tokens,
        )
