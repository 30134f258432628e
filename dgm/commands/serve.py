"""`dgm serve` (watch and steer runs in the browser) and `dgm steer` (the same requests
from a terminal)."""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Annotated

import typer

STEER_HELP = """What to ask the run's loop (it applies the request between jobs and records it
in the events with who asked):

  stop                  stop gracefully: nothing new starts, running jobs finish
  budget USD            set the dollar budget
  eval-limit N          set the evaluation limit
  workers N             set the number of workers
  pin NODE              NODE is always a candidate parent
  ban NODE              NODE is never a parent and never shipped
  evaluate NODE [N]     queue N (default 1) more evaluations of NODE
  fork NODE [--to DIR]  a new run with NODE as its seed (--start: start it now)
  list                  the requests so far and the loop's answers"""


def register(app: typer.Typer) -> None:
    app.command("serve", short_help="A live web page over runs, with steering.")(serve)
    short = "Stop a run, change a limit, pin, ban, evaluate or fork a node; list requests."
    app.command("steer", help=STEER_HELP, short_help=short)(steer)


def serve(
    run_dirs: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Run folders, or folders holding them (default: ./archive).", show_default=False
        ),
    ] = None,
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    host: Annotated[
        str, typer.Option(help="Address to bind; anything but 127.0.0.1 exposes the page.")
    ] = "127.0.0.1",
) -> None:
    """A live web page over runs: lineage tree, node pages, progress; steering with the
    token it prints."""
    from aiohttp import web

    from dgm.serve.app import Server

    server = Server(run_dirs or [Path("archive")], host=host, port=port)
    names = ", ".join(server.runs) or "none yet (runs started in these folders appear)"
    typer.echo(f"serving {len(server.runs)} run(s): {names}")
    typer.echo(f"open     http://{host}:{port}/#token={server.token}")
    typer.echo(f"token    {server.token}  (steering needs it; without it the page is read-only)")
    if host not in ("127.0.0.1", "localhost", "::1"):
        typer.echo(f"WARNING: bound to {host}: anyone who can reach it can read these runs")
    web.run_app(server.app(), host=host, port=port, print=None)


def steer(
    run_dir: Annotated[Path, typer.Argument(help="The run directory.", show_default=False)],
    action: Annotated[
        str,
        typer.Argument(
            help="stop, budget, eval-limit, workers, pin, ban, evaluate, fork, list",
            show_default=False,
        ),
    ],
    value: Annotated[str | None, typer.Argument(help="The node, amount or count.")] = None,
    count: Annotated[int | None, typer.Argument(help="evaluate: how many.")] = None,
    to: Annotated[Path | None, typer.Option("--to", help="fork: the new run's folder.")] = None,
    start: Annotated[bool, typer.Option("--start", help="fork: start the new run now.")] = False,
) -> None:
    """Ask a run's loop to stop, re-budget, pin, ban or evaluate (see `dgm steer --help`)."""
    from dgm.errors import DgmError
    from dgm.serve.fork import fork_run, start_run
    from dgm.store.db import Database
    from dgm.store.run import DB_FILE
    from dgm.store.steering import add_request, requests

    who = f"cli ({getpass.getuser()})"
    db = Database.open(Path(run_dir) / DB_FILE) if (Path(run_dir) / DB_FILE).is_file() else None
    if db is None:
        raise DgmError(f"{run_dir} holds no run (no {DB_FILE})", "give a folder made by `dgm run`")
    try:
        if action == "list":
            asked = requests(db)
            for r in asked:
                answer = f"{r.state}: {r.note}" if r.note else r.state
                typer.echo(f"#{r.id} {r.action} {r.args} by {r.who}: {answer}")
            if not asked:
                typer.echo(f"no steering requests yet (ask one: dgm steer {run_dir} stop)")
            return
        if action == "fork":
            if value is None or not value.isdigit():
                raise DgmError("`fork` needs the node to start from", "e.g. dgm steer RUN fork 12")
            dest = fork_run(run_dir, int(value), to, who)
            typer.echo(f"created {dest} from node {value}")
            if start:
                typer.echo(f"started `dgm resume {dest}` (pid {start_run(dest)})")
            else:
                typer.echo(f"start it: dgm resume {dest}")
            return
        name = action.replace("-", "_")
        key = {"budget": "usd", "eval_limit": "max_evals", "workers": "workers"}.get(name, "node")
        args = {} if name == "stop" else {key: value}
        if name == "evaluate":
            args["count"] = count or 1
        row = add_request(db, name, args, who)
        typer.echo(f"asked: #{row.id} {row.action} {row.args}; the loop applies it between jobs"
                   f" (see `dgm steer {run_dir} list`)")  # fmt: skip
    finally:
        db.close()
