"""Budgets and totals: reserve a call's worst-case cost before it goes out, settle after.

The run's dollar cap must hold with many jobs calling at once. Before forwarding, each
call reserves its maximum possible cost (input estimate + max output tokens at the
model's prices). A call is
- refused (HTTP 402) when spent + its maximum would pass a cap: it could overshoot;
- held back (it waits) when only the reservations of calls in flight stand in the way:
  they usually settle far below their maximum, and then it fits.
So the cap is overshot only if a provider bills more than the reservation assumed
(the input estimate is deliberately high), never because calls raced.

All methods run on the gateway's event loop; the lock guards readers on other threads.
"""

from __future__ import annotations

import asyncio
import copy
import threading
from dataclasses import dataclass, field

from dgm.config import JobBudget
from dgm.gateway.types import BudgetRefused, Tally, UsageRecord, UsageTotals

EPS = 1e-9  # dollars; absorbs float residue of reservations added and removed


@dataclass
class JobAccount:
    job_id: str
    budget: JobBudget
    started: int = 0
    """Calls admitted (in flight or done): what `max_calls` counts."""
    tally: Tally = field(default_factory=Tally)
    reserved_usd: float = 0.0


@dataclass(frozen=True)
class Reservation:
    job_id: str
    max_cost_usd: float


class Ledger:
    def __init__(self, run_cap_usd: float | None = None, spent_before_usd: float = 0.0) -> None:
        self.run_cap_usd = run_cap_usd
        self.run_cap_hit = False
        """Set once a call was refused for the run's cap: the run should stop."""
        self.spent_before_usd = spent_before_usd
        self._jobs: dict[str, JobAccount] = {}
        self._reserved_usd = 0.0
        self._totals = UsageTotals(run=Tally(), spent_usd=spent_before_usd, refused=0)
        self._lock = threading.Lock()
        self._settled: asyncio.Event | None = None

    def set_run_cap(self, usd: float | None) -> None:
        """A person changed the run's dollar cap (steering); a raised cap admits calls again."""
        with self._lock:
            self.run_cap_usd = usd
            self.run_cap_hit = False

    def open_job(self, job_id: str, budget: JobBudget) -> None:
        with self._lock:
            account = self._jobs.get(job_id)
            if account is None:
                self._jobs[job_id] = JobAccount(job_id, budget)
            else:  # a job bound again (a retry of the same job) keeps what it spent
                account.budget = budget

    def new_attempt(self, job_id: str) -> None:
        """The job runs again after an outage: it gets its whole job budget afresh. What
        its earlier attempts spent stays in the run's totals (and its `by_job` tally)."""
        with self._lock:
            account = self._jobs.get(job_id)
            if account is not None:
                account.started -= account.tally.calls  # calls still in flight stay counted
                account.tally = Tally()

    async def reserve(
        self, job_id: str, max_cost_usd: float, max_tokens: int, modest_usd: float = 0.0
    ) -> Reservation:
        """Admit one call whose worst case is `max_cost_usd` and `max_tokens` (input
        estimate + output cap), or raise `BudgetRefused`; may wait for calls in flight.
        `modest_usd` is what the same call with a modest output cap would cost: only
        when even that passes the run's cap is the run out of money (`run_cap_hit`)."""
        while True:
            with self._lock:
                account = self._jobs[job_id]
                self._refuse_if_over(account, max_cost_usd, max_tokens, modest_usd)
                if self._fits_with_reservations(account, max_cost_usd):
                    account.started += 1
                    account.reserved_usd += max_cost_usd
                    self._reserved_usd += max_cost_usd
                    return Reservation(job_id, max_cost_usd)
            if self._settled is None:
                self._settled = asyncio.Event()
            await self._settled.wait()

    def settle(self, reservation: Reservation, record: UsageRecord | None) -> None:
        """Release a reservation and book what the call really cost (None: no call made)."""
        with self._lock:
            account = self._jobs[reservation.job_id]
            account.reserved_usd -= reservation.max_cost_usd
            self._reserved_usd -= reservation.max_cost_usd
            if record is None:
                account.started -= 1
            else:
                account.tally.add(record)
                self._book(record)
        if self._settled is not None:  # wake the calls held back
            self._settled.set()
            self._settled = None

    def book(self, record: UsageRecord) -> None:
        """A call no job made (the breaker's probe): in the run's spend, no job's budget."""
        with self._lock:
            self._book(record)

    def _book(self, record: UsageRecord) -> None:
        totals = self._totals
        totals.run.add(record)
        totals.spent_usd += record.cost_usd
        for table, key in (
            (totals.by_job, record.job_id),
            (totals.by_node, record.node_id),
            (totals.by_role, record.role),
            (totals.by_model, record.model),
        ):
            table.setdefault(key, Tally()).add(record)

    def snapshot(self) -> UsageTotals:
        with self._lock:
            return copy.deepcopy(self._totals)

    # -- the rules ---------------------------------------------------------------------
    def _refuse_if_over(
        self, account: JobAccount, max_cost: float, max_tokens: int, modest: float
    ) -> None:
        budget, tally = account.budget, account.tally
        problem = hint = None
        if budget.max_calls is not None and account.started >= budget.max_calls:
            problem = f"job {account.job_id} has made its {budget.max_calls} allowed calls"
            hint = "raise llm.job_budget.max_calls"
        elif budget.max_tokens is not None and tally.tokens + max_tokens > budget.max_tokens:
            problem = (
                f"job {account.job_id} has used {tally.tokens} of its {budget.max_tokens} tokens;"
                f" this call could use up to {max_tokens} more"
            )
            hint = "raise llm.job_budget.max_tokens or lower max_tokens"
        elif budget.max_usd is not None and tally.cost_usd + max_cost > budget.max_usd:
            problem = (
                f"job {account.job_id} has spent ${tally.cost_usd:.4f} of its "
                f"${budget.max_usd:g}; this call could cost up to ${max_cost:.4f}"
            )
            hint = "raise llm.job_budget.max_usd or lower max_tokens"
        elif self.run_cap_usd is not None and self._totals.spent_usd + max_cost > self.run_cap_usd:
            left = self.run_cap_usd - self._totals.spent_usd
            if self._totals.spent_usd + modest > self.run_cap_usd:
                problem = (
                    f"the run has spent ${self._totals.spent_usd:.4f} of its "
                    f"${self.run_cap_usd:g} budget; this call could cost up to ${max_cost:.4f}"
                )
                hint = "raise limits.budget_usd"
                self.run_cap_hit = True
            else:  # the call is too big, not the run too poor: refuse it alone
                problem = (
                    f"this call could cost up to ${max_cost:.4f}, more than the "
                    f"${left:.4f} the run has left"
                )
                hint = "lower max_tokens"
        if problem:
            self._totals.refused += 1
            raise BudgetRefused(f"budget exceeded: {problem}", hint)

    def _fits_with_reservations(self, account: JobAccount, max_cost: float) -> bool:
        budget = account.budget
        if (
            budget.max_usd is not None
            and account.tally.cost_usd + account.reserved_usd + max_cost > budget.max_usd + EPS
        ):
            return False
        return (
            self.run_cap_usd is None
            or self._totals.spent_usd + self._reserved_usd + max_cost <= self.run_cap_usd + EPS
        )
