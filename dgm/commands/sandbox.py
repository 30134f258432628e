"""`dgm sandbox ...`: build images, check the setup, sweep orphans, run one command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dgm.sandbox.spec import Mount, ResourceLimits, SandboxSpec

sandbox_app = typer.Typer(
    help="Sandboxes: offline images, checks, debugging.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    app.add_typer(sandbox_app, name="sandbox")


@sandbox_app.command()
def build(
    names: Annotated[
        list[str] | None,
        typer.Argument(help="Images to build (default: runtime polyglot), or swebench."),
    ] = None,
    force: Annotated[bool, typer.Option(help="Rebuild even if the tag exists.")] = False,
    data: Annotated[
        str | None, typer.Option(help="swebench: the instances folder (instances.jsonl, repos/).")
    ] = None,
    ids: Annotated[
        str | None, typer.Option(help="swebench: instance ids (ID,ID or @FILE; default all).")
    ] = None,
    timeout: Annotated[
        float, typer.Option(min=1, help="Seconds one image's build may take before it is cut.")
    ] = 3600.0,
) -> None:
    """Build sandbox images offline from Debian packages (reused when unchanged); a line
    per build step, and on failure the last lines of the failing tool's output."""
    from dgm.benchmarks.registry import BENCHMARKS
    from dgm.benchmarks.subsets import read_id_file
    from dgm.dependencies import require
    from dgm.sandbox import images

    # Images for a benchmark its judge cannot grade (a missing extra) are built for nothing.
    require([name for name in names or [] if name in BENCHMARKS])
    wanted = None
    if ids:
        wanted = read_id_file(Path(ids[1:])) if ids.startswith("@") else ids.split(",")
    for name in names or ["runtime", "polyglot"]:
        if name in BENCHMARKS:
            for line in BENCHMARKS[name].build_images(data, wanted, force, typer.echo, timeout):
                typer.echo(line)
        else:
            typer.echo(images.build(name, log=typer.echo, force=force, timeout_s=timeout))


@sandbox_app.command()
def doctor(
    executor: Annotated[
        str, typer.Option(help="local (this machine) or ray (every node of the cluster).")
    ] = "local",
    ray_address: Annotated[
        str | None, typer.Option(help="The Ray cluster (default: this machine's).")
    ] = None,
) -> None:
    """Say what is present, what is missing, and the command that fixes it."""
    from dgm.sandbox.doctor import run_checks

    checks = run_checks()
    if executor == "ray":
        from dgm.executors.distributed.cluster import INSTALL, doctor_checks, ray_installed

        if not ray_installed():
            typer.echo(f"error: checking the Ray cluster needs Ray: {INSTALL}", err=True)
            raise typer.Exit(2)
        checks += doctor_checks(ray_address)
    failed = False
    for check in checks:
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
        limits=ResourceLimits(memory=memory),
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
