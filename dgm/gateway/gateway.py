"""The Gateway: started once per run, serving every job's LLM calls from one event loop.

It runs an asyncio loop in a background thread. The public methods are called from
ordinary threads (the loop, executors) and hop onto that loop; the call pipeline
(validate -> reserve budget -> backend with retries -> settle -> record) runs on it.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import stat
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web

from dgm.config import JobBudget, RunConfig
from dgm.errors import DgmError
from dgm.gateway.backends import KEY_VARIABLES, Backend, make_backend, provider_of
from dgm.gateway.budget import Ledger
from dgm.gateway.calls import BoundJob, CallPipeline, UsageSink
from dgm.gateway.exchange_log import ExchangeLog
from dgm.gateway.outages import OutageWatch
from dgm.gateway.pricing import PriceBook
from dgm.gateway.probe import ProviderProbes
from dgm.gateway.recorder import Recorder
from dgm.gateway.server import build_app
from dgm.gateway.settings import LOCALHOST, GatewaySettings
from dgm.gateway.socket_dir import prepare_socket_folder
from dgm.gateway.types import Endpoint, JobBinding, UsageTotals

T = TypeVar("T")

CONTAINER_SOCKET = "/run/dgm/llm.sock"
SHUTDOWN_GRACE_S = 2.0  # calls still in flight when a job ends or the gateway stops


class Gateway:
    """One gateway per process that serves jobs. Constructing it changes nothing outside
    it: the process-wide key redaction of log records and tracebacks is the serving
    process's own explicit step (`key_redaction.install_from_environment()`, the CLI's
    first), and nothing listens before `start()`."""

    def __init__(self, settings: GatewaySettings, on_usage: UsageSink | None = None) -> None:
        provider_of(settings.model)  # fail on a bad string before anything starts
        self.settings = settings
        self.model = settings.model
        self.diagnose_model = settings.diagnose_model or settings.model
        self.run = settings.run
        self.log_dir = Path(settings.log_dir) if settings.log_dir is not None else None
        self.prices = PriceBook(settings.prices)
        self.ledger = Ledger(settings.run_budget_usd, settings.spent_usd)
        self.job_budget = settings.job_budget
        self.retry = settings.retry
        self.on_usage = on_usage
        self.host = settings.host
        self.port = settings.port
        """The TCP port: `settings.port` until `start()`, then the one it listens on."""
        self.context_window_tokens = settings.context_window_tokens
        # This gateway's own scrubbing (answers, exchange logs); not the process's loggers.
        self._secrets = tuple(v for v in (os.environ.get(n, "") for n in KEY_VARIABLES) if v)
        self._backends: dict[str, Backend] = {}
        self._by_token: dict[str, BoundJob] = {}
        self._by_key: dict[tuple[str, str], BoundJob] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tcp_runner: web.AppRunner | None = None
        self._recorder = Recorder()
        self._calls = CallPipeline(
            run=settings.run,
            ledger=self.ledger,
            prices=self.prices,
            retry=self.retry,
            recorder=self._recorder,
            on_usage=on_usage,
            default_max_tokens=settings.default_max_tokens,
            secrets=self._secrets,
        )
        self.outages = OutageWatch()
        """Which jobs met a provider outage (outages.py); the loop asks `outage_of`."""
        self._probes = ProviderProbes(
            self.outages, self._backend, settings.run, self.retry.timeout_s
        )
        self._calls.on_upstream_failure = self._probes.failed
        self._calls.on_call = lambda job: self.outages.called(job.binding.job_id)

    @classmethod
    def from_config(
        cls,
        config: RunConfig,
        *,
        run: str,
        log_dir: Path | None,
        on_usage: UsageSink | None,
        spent_usd: float = 0.0,
        port: int | None = 0,
        host: str = LOCALHOST,
    ) -> Gateway:
        settings = GatewaySettings.from_config(
            config, run=run, log_dir=log_dir, spent_usd=spent_usd, port=port, host=host
        )
        return cls(settings, on_usage)

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> Gateway:
        if self._loop is not None:
            return self
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="dgm-gateway", daemon=True
        )
        self._thread.start()
        try:
            self._on_loop(self._start())
        except BaseException:
            self.stop()
            raise
        return self

    async def _start(self) -> None:
        for model in {self.model, self.diagnose_model}:
            self._backend(model)
            self.prices.require(model)
        if self.port is None:
            return
        app = build_app(
            lambda request: self._job_for_token(request),
            self._calls.exchange,
            self._calls.count_tokens,
        )
        self._tcp_runner = web.AppRunner(app, access_log=None, shutdown_timeout=SHUTDOWN_GRACE_S)
        await self._tcp_runner.setup()
        site = web.TCPSite(self._tcp_runner, self.host, self.port)
        try:
            await site.start()
        except OSError as exc:
            raise DgmError(
                f"the gateway cannot listen on {self.host}:{self.port}: {exc.strerror}",
                "choose another port, or 0 for any free one",
            ) from None
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def stop(self) -> None:
        """Close every listener and backend; the usage sink is drained first."""
        loop, self._loop = self._loop, None
        if loop is not None and loop.is_running():
            asyncio.run_coroutine_threadsafe(self._stop(), loop).result(timeout=30)
            loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None
        if loop is not None:
            loop.close()
        self._recorder.close()

    async def _stop(self) -> None:
        for job in list(self._by_key.values()):
            await self._unbind(job)
        if self._tcp_runner is not None:
            await self._tcp_runner.cleanup()
        for backend in self._backends.values():
            await backend.close()
        # Calls still running past the grace period end now, and are settled as cancelled.
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def __enter__(self) -> Gateway:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The TCP base URL (for the local sandbox and for debugging)."""
        if self.port is None:
            raise DgmError("this gateway serves no TCP port", "start it with port=0")
        return f"http://{self.host}:{self.port}/v1"

    # -- binding jobs ------------------------------------------------------------------
    def bind_job(
        self,
        binding: JobBinding,
        budget: JobBudget | None = None,
        socket_path: Path | None = None,
        *,
        container_socket_path: str | None = CONTAINER_SOCKET,
        model: str | None = None,
        log_path: Path | None = None,
    ) -> Endpoint:
        """Route one job's calls. With `socket_path`, serve a socket there for the job
        alone (mount it at `container_socket_path`, or None when the agent runs on the
        host and uses the host path); without it, the agent uses TCP and the token.
        `model` defaults to the run's model (the diagnose model for role `diagnose`)."""
        return self._on_loop(
            self._bind(binding, budget, socket_path, container_socket_path, model, log_path)
        )

    async def _bind(
        self,
        binding: JobBinding,
        budget: JobBudget | None,
        socket_path: Path | None,
        container_socket_path: str | None,
        model: str | None,
        log_path: Path | None,
    ) -> Endpoint:
        if (binding.job_id, binding.role) in self._by_key:
            raise DgmError(
                f"job {binding.job_id} ({binding.role}) is already bound",
                "unbind its endpoint first",
            )
        if socket_path is None and self.port is None:
            raise DgmError("this gateway serves no TCP port, so a job needs a socket_path")
        model = model or (self.diagnose_model if binding.role == "diagnose" else self.model)
        if log_path is None and self.log_dir is not None:
            log_path = self.log_dir / binding.job_id / f"llm-{binding.role}.jsonl"
        budget = budget or self.job_budget
        job = BoundJob(
            binding=binding,
            max_concurrent=budget.max_concurrent,
            model=model,
            backend=self._backend(model),
            price=self.prices.require(model),
            token=secrets.token_urlsafe(24),
            log=ExchangeLog(log_path, self._secrets) if log_path else None,
        )
        if socket_path is not None:
            await self._serve_socket(job, Path(socket_path))
            url = f"unix://{container_socket_path or socket_path}"
        else:
            url = self.url
        self.ledger.open_job(binding.job_id, budget)
        self._by_token[job.token] = job
        self._by_key[job.key] = job
        env = {"DGM_LLM_URL": url, "DGM_LLM_TOKEN": job.token, "DGM_LLM_MODEL": model}
        if self.context_window_tokens:
            env["DGM_LLM_CONTEXT_TOKENS"] = str(self.context_window_tokens)
        return Endpoint(
            binding=binding,
            model=model,
            token=job.token,
            env=env,
            socket_path=job.socket_path,
            container_socket_path=container_socket_path if socket_path is not None else None,
            log_path=log_path,
        )

    async def _serve_socket(self, job: BoundJob, path: Path) -> None:
        if len(os.fsencode(path)) > 107:
            raise DgmError(
                f"socket path {path} is longer than the 107 bytes a unix socket allows",
                "use a shorter folder, e.g. dgm.gateway.short_socket_path(job_id)",
            )
        prepare_socket_folder(path.parent)
        if path.exists() or path.is_symlink():
            if not stat.S_ISSOCK(path.lstat().st_mode):
                raise DgmError(f"{path} exists and is not a socket", "choose another path")
            path.unlink()
        app = build_app(
            lambda request: job if job.active else None,
            self._calls.exchange,
            self._calls.count_tokens,
        )
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=SHUTDOWN_GRACE_S)
        await runner.setup()
        await web.UnixSite(runner, str(path)).start()
        # Only this user; the sandbox layer grants its container uid access to the file.
        os.chmod(path, 0o600)
        job.runner, job.socket_path = runner, path

    def unbind(self, endpoint: Endpoint) -> None:
        """Stop serving the job: its socket closes and its token stops working."""
        job = self._by_token.get(endpoint.token)
        if job is not None and self._loop is not None:
            self._on_loop(self._unbind(job))
            self._recorder.flush()  # the job's log and usage are complete on return

    async def _unbind(self, job: BoundJob) -> None:
        job.active = False
        self._by_token.pop(job.token, None)
        self._by_key.pop(job.key, None)
        if job.runner is not None:
            await job.runner.cleanup()
        if job.socket_path is not None:
            job.socket_path.unlink(missing_ok=True)
        if job.log is not None:
            self._recorder.put(job.log.close)

    def _job_for_token(self, request: web.Request) -> BoundJob | None:
        """The job of the bearer token (OpenAI clients) or of `x-api-key` (Anthropic's)."""
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            token = request.headers.get("x-api-key", "")
        return self._by_token.get(token.strip())

    # -- calls -------------------------------------------------------------------------
    def complete(self, who: JobBinding | Endpoint, request: dict[str, Any]) -> dict[str, Any]:
        """An in-process call (e.g. the diagnosis step), accounted and budgeted like an
        agent's. A bare binding is bound for the call and unbound after. Raises
        `LLMCallError` (`BudgetRefused` for a budget) on failure."""
        if isinstance(who, Endpoint):
            job = self._by_token.get(who.token)
            if job is None:
                raise DgmError(f"job {who.binding.job_id} is not bound", "bind_job it first")
            return self._on_loop(self._calls.call(job, request))
        bound = self._by_key.get((who.job_id, who.role))
        if bound is not None:
            return self._on_loop(self._calls.call(bound, request))
        endpoint = self.bind_job(who)
        try:
            return self.complete(endpoint, request)
        finally:
            self.unbind(endpoint)

    # -- outages ------------------------------------------------------------------------
    def probe(self, model: str | None = None) -> str | None:
        """Ask the provider of `model` (default: the run's) whether it answers: None when
        it does, else why not. For the loop's circuit breaker."""
        return self._on_loop(self._probes.probe(model or self.model))

    def watch_outages(self) -> Gateway:
        """Probe a provider as soon as a call to it fails for good (the evidence that an
        outage is the provider's, not the agent's: outages.py)."""
        self._probes.enabled = True
        return self

    def outage_of(self, job_id: str) -> tuple[str, str] | None:
        """(`llm:<provider>`, why) when the job met a provider outage no agent could
        cause (corroborated by other jobs or a probe, not provoked by its own flood)."""
        found = self.outages.outage_of(job_id)
        unexplained = self.outages.unexplained(job_id) if found is None else None
        if unexplained is not None and self._probes.enabled:  # the probe may still be out
            self.probe(unexplained.model or self.model)
            found = self.outages.outage_of(job_id)
        return None if found is None else (f"llm:{found[0]}", found[1])

    # -- helpers -----------------------------------------------------------------------
    def totals(self) -> UsageTotals:
        return self.ledger.snapshot()

    def run_budget_exhausted(self) -> bool:
        """Whether a call was refused because of the run's dollar cap."""
        return self.ledger.run_cap_hit

    def set_run_budget(self, usd: float | None) -> None:
        """The run's dollar cap, changed while it runs (`dgm steer RUN budget USD`)."""
        self.ledger.set_run_cap(usd)

    def replay_miss(self, job_id: str) -> str | None:
        """Why a replayed job could not be answered (a call its recording lacks), or None."""
        for backend in list(self._backends.values()):
            missed = getattr(backend, "misses", {}).get(job_id)
            if missed:
                return missed
        return None

    def flush(self) -> None:
        """Wait until every call so far is in its exchange log and the usage sink."""
        self._recorder.flush()

    def _backend(self, model: str) -> Backend:
        if model not in self._backends:
            self._backends[model] = make_backend(
                model, self.retry.timeout_s, prompt_caching=self.settings.prompt_caching
            )
        return self._backends[model]

    def _on_loop(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop is None:
            coro.close()
            raise DgmError("the gateway is not running", "call Gateway.start() first")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()
