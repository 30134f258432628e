"""`dgm report`, `dgm plot`, `dgm export`: look at a run, then ship its best agent."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

RunDir = Annotated[Path, typer.Argument(help="The run directory.", show_default=False)]


def register(app: typer.Typer) -> None:
    app.command("report")(report)
    app.command("plot")(plot)
    app.command("export")(export)


def report(
    run_dir: RunDir,
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="HTML file to write (default: RUN_DIR/report.html)."),
    ] = None,
) -> None:
    """One self-contained HTML page: lineage tree, node details, progress, task heatmap."""
    from dgm.report.html import write_report

    path = write_report(run_dir, output)
    typer.echo(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB); open it in a browser")


def plot(
    run_dir: RunDir,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Folder (default: RUN_DIR/plots).")
    ] = None,
    formats: Annotated[
        str, typer.Option("--format", help="Comma-separated: png, svg, pdf.")
    ] = "png,svg",
) -> None:
    """The lineage tree, progress and spend charts as image files (for papers and slides)."""
    from dgm.report.plot import write_plots

    out = output or run_dir / "plots"
    files = write_plots(run_dir, out, [f.strip() for f in formats.split(",") if f.strip()])
    typer.echo(f"wrote {len(files)} files to {out}: " + ", ".join(p.name for p in files))


def export(
    run_dir: RunDir,
    node: Annotated[str, typer.Argument(help="A node id, or `best`.")] = "best",
    output: Annotated[
        Path, typer.Option("-o", "--output", help="Folder to write (a .bundle file for bundle).")
    ] = ...,
    fmt: Annotated[
        str, typer.Option("--format", help="dir (codebase + README), bundle (git) or image.")
    ] = "dir",
    tag: Annotated[str | None, typer.Option("--tag", help="Image tag for --format image.")] = None,
) -> None:
    """Export a node's agent to run it outside dgm: a folder, a git bundle or an image."""
    from dgm.report.export import export as do_export

    typer.echo(do_export(run_dir, node, output, fmt, tag))
