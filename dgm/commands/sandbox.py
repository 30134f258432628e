"""`dgm sandbox ...`: build images, check the setup, sweep orphans, run one command."""

from __future__ import annotations

from typing import Annotated

import typer

from dgm.sandbox.spec import Limits, Mount, SandboxSpec

sandbox_app = typer.Typer(
    help="Sandboxes: offline images, checks, debugging.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    app.add_typer(sandbox_app, name="sandbox")


@sandbox_app.command()
def build(
    names: Annotated[
        list[str] | None, typer.Argument(help="Images to build (default: runtime polyglot).")
    ] = None,
    force: Annotated[bool, typer.Option(help="Rebuild even if the tag exists.")] = False,
) -> None:
    """Build sandbox images offline from Debian packages (reused when unchanged)."""
    from dgm.sandbox import images

    for name in names or ["runtime", "polyglot"]:
        typer.echo(images.build(name, log=typer.echo, force=force))


@sandbox_app.command()
def doctor() -> None:
    """Say what is present, what is missing, and the command that fixes it."""
    from dgm.sandbox.doctor import run_checks

    failed = False
    for check in run_checks():
        mark = typer.style("ok  ", fg="green") if check.ok else typer.style("MISS", fg="red")
        typer.echo(f"{mark} {check.name}: {check.detail}")
        if check.fix:
            typer.echo(f"     fix: {check.fix}")
        failed |= not check.ok
    if failed:
        raise typer.Exit(1)


@sandbox_app.command()
def sweep(
    everything: Annotated[
        bool, typer.Option("--all", help="Remove every dgm container, also of live runs.")
    ] = False,
) -> None:
    """Remove containers left behind by dgm processes that died."""
    from dgm.sandbox.docker_client import docker_client
    from dgm.sandbox.orphans import sweep as do_sweep

    result = do_sweep(docker_client(), everything=everything)
    typer.echo(f"removed {len(result.removed)} container(s); kept {len(result.kept)} of live runs")
    for name in result.removed:
        typer.echo(f"  removed {name}")


@sandbox_app.command(context_settings={"allow_interspersed_args": False})
def run(
    cmd: Annotated[list[str], typer.Argument(help="The command, after `--`.")],
    image: Annotated[str, typer.Option(help="Image name or full tag.")] = "runtime",
    timeout: Annotated[float, typer.Option(help="Wall-clock limit in seconds.")] = 60.0,
    mount: Annotated[list[str] | None, typer.Option(help="SRC:DST[:ro], repeatable.")] = None,
    backend: Annotated[str, typer.Option(help="docker, local or auto.")] = "docker",
    memory: Annotated[str, typer.Option(help="Memory limit, e.g. 2g.")] = "4g",
    workdir: Annotated[str, typer.Option(help="Working directory inside.")] = "/work",
) -> None:
    """Run one command in a sandbox with the default limits; print output and exit code."""
    from dgm.sandbox.session import run_command

    spec = SandboxSpec(
        image=image,
        mounts=tuple(Mount.parse(m) for m in mount or []),
        workdir=workdir,
        limits=Limits(memory=memory),
    )
    result = run_command(spec, cmd, timeout, backend=backend)
    typer.echo(result.output, nl=not result.output.endswith("\n"))
    notes = [f"exit code {result.exit_code}", f"{result.duration_s:.2f} s"]
    if result.timed_out:
        notes.append("timed out")
    if result.oom_killed:
        notes.append("out of memory")
    typer.echo("[" + ", ".join(notes) + "]", err=True)
    raise typer.Exit(result.exit_code if result.exit_code < 256 else 1)
