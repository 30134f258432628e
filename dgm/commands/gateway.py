"""`dgm gateway`: serve the gateway on its own, for debugging an agent or as a budgeted,
key-holding proxy for any OpenAI-compatible client."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dgm.commands.options import PriceOption
from dgm.errors import DgmError
from dgm.gateway.gateway import Gateway
from dgm.gateway.retry import RetryPolicy
from dgm.gateway.settings import GatewaySettings
from dgm.gateway.types import JobBinding, UsageRecord, UsageTotals

BINDING = JobBinding(run="standalone", job_id="standalone", role="standalone")


def register(app: typer.Typer) -> None:
    app.command("gateway")(gateway)


def gateway(
    llm: Annotated[
        str, typer.Option("--llm", help="Model string, e.g. anthropic/claude-sonnet-4-5.")
    ],
    socket: Annotated[
        Path | None, typer.Option("--socket", help="Serve on this unix socket instead of TCP.")
    ] = None,
    port: Annotated[
        int | None, typer.Option("--port", help="TCP port on 127.0.0.1 (default: any free one).")
    ] = None,
    budget_usd: Annotated[
        float | None, typer.Option("--budget-usd", help="Refuse calls past this many dollars.")
    ] = None,
    log: Annotated[
        Path | None, typer.Option("--log", help="Write every exchange under this folder.")
    ] = None,
    timeout_s: Annotated[
        float, typer.Option("--timeout", help="Cut an upstream call after this many seconds.")
    ] = 300.0,
    prompt_caching: Annotated[
        bool,
        typer.Option(help="Mark each request's stable prefix for the provider's prompt cache."),
    ] = True,
    price: PriceOption = None,
) -> None:
    """Serve the LLM gateway until Ctrl-C, then print the usage totals."""
    if socket is not None and port is not None:
        raise DgmError("give --socket or --port, not both")
    if budget_usd is not None and budget_usd <= 0:
        raise DgmError(f"--budget-usd must be positive (got {budget_usd})")
    console = Console(stderr=True)
    gw = Gateway(
        GatewaySettings(
            llm,
            run="standalone",
            log_dir=log,
            prices={llm: price} if price else None,
            run_budget_usd=budget_usd,
            retry=RetryPolicy(timeout_s=timeout_s),
            port=None if socket is not None else (port or 0),
            prompt_caching=prompt_caching,
        ),
        on_usage=lambda r: _print_call(console, r),
    ).start()
    stop = _stop_on_sigterm()  # before "listening": a supervisor may stop it at once
    try:
        endpoint = gw.bind_job(BINDING, socket_path=socket, container_socket_path=None)
        if socket is not None:
            typer.echo(f"listening on unix socket {endpoint.socket_path}")
        else:
            typer.echo(f"listening on {gw.url}")
            typer.echo(f"  export OPENAI_BASE_URL={gw.url} OPENAI_API_KEY={endpoint.token}")
        for name, value in endpoint.env.items():
            typer.echo(f"  export {name}={value}")
        if endpoint.log_path is not None:
            typer.echo(f"exchanges are logged to {endpoint.log_path}")
        typer.echo("Ctrl-C stops.", err=True)
        _wait_for_interrupt(stop)
    finally:
        gw.stop()
    _print_totals(gw.totals())


def _stop_on_sigterm() -> threading.Event:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    return stop


def _wait_for_interrupt(stop: threading.Event) -> None:
    """Block until Ctrl-C or SIGTERM."""
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass


def _print_call(console: Console, record: UsageRecord) -> None:
    status = f"[red]{record.error}[/red]" if record.error else "ok"
    console.print(
        f"call {record.model}: {record.input_tokens} in / {record.output_tokens} out, "
        f"${record.cost_usd:.4f}, {record.latency_s:.2f}s, {status}",
        highlight=False,
    )


def _print_totals(totals: UsageTotals) -> None:
    table = Table(title="gateway usage")
    columns = ("model", "calls", "errors", "input", "cached", "cache write", "output", "dollars")
    for column in columns:
        table.add_column(column, justify="left" if column == "model" else "right")
    for model, tally in sorted(totals.by_model.items()):
        table.add_row(
            model,
            str(tally.calls),
            str(tally.errors),
            str(tally.input_tokens),
            str(tally.cached_tokens),
            str(tally.cache_write_tokens),
            str(tally.output_tokens),
            f"{tally.cost_usd:.4f}",
        )
    run = totals.run
    table.add_row(
        "total",
        str(run.calls),
        str(run.errors),
        str(run.input_tokens),
        str(run.cached_tokens),
        str(run.cache_write_tokens),
        str(run.output_tokens),
        f"{run.cost_usd:.4f}",
    )
    Console().print(table)
    if totals.refused:
        typer.echo(f"{totals.refused} calls refused by the budget")
