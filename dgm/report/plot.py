"""`dgm plot`: the lineage tree and progress charts as PNG/SVG files (matplotlib)."""

from __future__ import annotations

from pathlib import Path

from dgm.errors import DgmError
from dgm.report import lineage
from dgm.report.layout import tidy_layout
from dgm.report.progress import Progress, run_progress
from dgm.store import Run

FORMATS = ("png", "svg", "pdf")


def _pyplot():
    try:
        import matplotlib
    except ModuleNotFoundError:
        raise DgmError(
            "`dgm plot` needs matplotlib, which is not installed",
            "pip install 'dgm[report]' (or pip install matplotlib)",
        ) from None
    matplotlib.use("Agg")  # files only: never open a window
    import matplotlib.pyplot as plt

    return plt


def write_plots(run_dir: Path, out_dir: Path, formats: list[str]) -> list[Path]:
    """Write tree, progress and spend-by-role figures in each format; returns the files."""
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        raise DgmError(
            f"unknown plot format {', '.join(bad) or '(none)'}",
            f"use one or more of: {', '.join(FORMATS)}",
        )
    plt = _pyplot()
    out_dir.mkdir(parents=True, exist_ok=True)
    with Run.open(run_dir) as run:
        graph = lineage.build_lineage(run)
        progress = run_progress(run)
        spend = {str(k or "unknown"): v["cost_usd"] or 0.0 for k, v in run.usage_by("role").items()}
        name = run.config.name
    figures = {
        "tree": _tree_figure(plt, graph, name),
        "progress": _progress_figure(plt, progress, name),
        "spend_by_role": _spend_figure(plt, spend, name),
    }
    written = []
    for stem, fig in figures.items():
        for fmt in formats:
            path = out_dir / f"{stem}.{fmt}"
            fig.savefig(path, dpi=150, bbox_inches="tight")
            written.append(path)
        plt.close(fig)
    return written


def _tree_figure(plt, graph, name: str):
    from matplotlib.collections import LineCollection

    pos = tidy_layout(graph)
    best = lineage.best_node(graph)
    path = set(lineage.ancestry(graph, best)) if best is not None else set()
    width = max((x for x, _ in pos.values()), default=0)
    depth = max((d for _, d in pos.values()), default=0)
    fig, ax = plt.subplots(figsize=(min(24, 4 + width * 0.08), min(14, 2 + depth * 0.7)))
    plain, muted, best_edges = [], [], []
    for parent, child in graph.edges():
        (x0, y0), (x1, y1) = pos[parent], pos[child]
        segment = [(x0, y0), (x0, y0 + 0.5), (x1, y0 + 0.5), (x1, y1)]
        if child in path:
            best_edges.append(segment)
        elif graph.nodes[child]["status"] == "rejected":
            muted.append(segment)
        else:
            plain.append(segment)
    ax.add_collection(LineCollection(plain, colors="#aab2bd", linewidths=0.6))
    ax.add_collection(LineCollection(muted, colors="#dde1e6", linewidths=0.5, linestyles="--"))
    ax.add_collection(LineCollection(best_edges, colors="#e0a100", linewidths=2.2))
    cmap = plt.get_cmap("RdYlGn")
    for rejected in (False, True):
        ids = [n for n in graph if (graph.nodes[n]["status"] == "rejected") == rejected]
        if not ids:
            continue
        attrs = [graph.nodes[n] for n in ids]
        ax.scatter(
            [pos[n][0] for n in ids],
            [pos[n][1] for n in ids],
            s=[8 + 6 * a["total"] ** 0.5 * 4 for a in attrs],
            c=[cmap(a["passed"] / a["total"]) if a["total"] else "#c9ced6" for a in attrs],
            edgecolors=["#e0a100" if n in path else "#333333" for n in ids],
            linewidths=[1.8 if n in path else 0.4 for n in ids],
            alpha=0.35 if rejected else 1.0,
            zorder=3,
        )
    if best is not None:
        a = graph.nodes[best]
        ax.annotate(
            f"best: node {best} ({a['passed']}/{a['total']})",
            pos[best],
            xytext=(6, 6),
            textcoords="offset points",
            fontsize=8,
            color="#8a6200",
        )
    if graph.number_of_nodes() <= 60:
        for n, (x, y) in pos.items():
            ax.annotate(str(n), (x, y), xytext=(5, -9), textcoords="offset points", fontsize=7)
    ax.set_ylim(depth + 0.8, -0.8)  # the seed on top
    ax.set_yticks(range(depth + 1) if depth <= 30 else range(0, depth + 1, 5))
    ax.set_xlim(-1, width + 1)
    ax.set_ylabel("depth")
    ax.set_xticks([])
    ax.set_title(
        f"{name}: lineage ({graph.number_of_nodes()} nodes; colour = pass rate, size = evaluations)"
    )
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    return fig


def _progress_figure(plt, p: Progress, name: str):
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8), sharey=True)
    hours = bool(p.seconds) and max(p.seconds) > 7200
    clock = [s / 3600 if hours else s / 60 for s in p.seconds]
    for ax, xs, label in (
        (axes[0], p.evals, "evaluations"),
        (axes[1], p.dollars, "dollars spent"),
        (axes[2], clock, "wall-clock (hours)" if hours else "wall-clock (minutes)"),
    ):
        ax.step(xs, [100 * v for v in p.best], where="post", color="#137333", label="best so far")
        ax.step(
            xs,
            [100 * v for v in p.mean],
            where="post",
            color="#0a58ca",
            linestyle="--",
            label="archive mean",
        )
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("pass rate (%)")
    axes[0].set_ylim(0, 102)
    axes[0].legend(loc="lower right", fontsize=8)
    fig.suptitle(f"{name}: progress")
    fig.tight_layout()
    return fig


def _spend_figure(plt, spend: dict[str, float], name: str):
    items = sorted(spend.items(), key=lambda kv: kv[1])
    fig, ax = plt.subplots(figsize=(6, 0.6 + 0.45 * max(1, len(items))))
    ax.barh([k for k, _ in items], [v for _, v in items], color="#6f8fbf")
    for i, (_, v) in enumerate(items):
        ax.text(v, i, f" ${v:,.2f}", va="center", fontsize=8)
    ax.set_xlabel("dollars")
    ax.set_title(f"{name}: spend by role (total ${sum(spend.values()):,.2f})")
    fig.tight_layout()
    return fig
