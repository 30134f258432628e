"""`dgm init`, `status`, `tree`, `show`, `diff`: create and inspect a run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from dgm.config import RunConfig
from dgm.paths import seed_agent_dir
from dgm.report import lineage
from dgm.report.costs import spend_lines
from dgm.report.outages import job_lines, outage_lines
from dgm.report.tree_text import tree_lines
from dgm.store import Run
from dgm.store.records import Score
from dgm.store.usage import evaluation_spend, job_spend

RunDir = Annotated[Path, typer.Argument(help="The run directory.", show_default=False)]


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.command("status")(status)
    app.command("tree")(tree)
    app.command("show")(show)
    app.command("diff")(diff)


def init(
    run_dir: RunDir,
    seed: Annotated[
        str | None,
        typer.Option(
            help="The agent to start from: a folder with agent.toml, a local git "
            "repository (file:///path/repo.git), or NAME==VERSION on the package "
            "index with --manifest (default: dgm's seed)."
        ),
    ] = None,
    manifest: Annotated[
        Path | None,
        typer.Option(help="agent.toml (and the files beside it) for a --seed NAME==VERSION."),
    ] = None,
    config: Annotated[Path | None, typer.Option(help="A run.toml to start from.")] = None,
) -> None:
    """Create a run with the seed agent as its root node; says what it builds first."""
    import tempfile

    from dgm.loop.agent_env_prep import prepare_agent_env
    from dgm.loop.seed_source import resolve_seed

    cfg = RunConfig.load(config) if config else RunConfig(name=run_dir.name)
    with tempfile.TemporaryDirectory(prefix="dgm-seed-") as tmp:
        folder = (resolve_seed(seed, manifest, Path(tmp), typer.echo) if seed
                  else seed_agent_dir())  # fmt: skip
        prepare_agent_env(folder, typer.echo)
        run = Run.create(run_dir, cfg, folder)
    typer.echo(f"created run {run_dir} (seed node 0, commit {run.node(0).commit[:10]})")


def status(run_dir: RunDir) -> None:
    """Summary of a run: nodes, evaluations, best node, spend, jobs."""
    with Run.open(run_dir) as run:
        graph = lineage.build_lineage(run)
        statuses = _count(graph.nodes[n]["status"] for n in graph)
        evals = sum(graph.nodes[n]["total"] for n in graph)
        best = lineage.best_node(graph)
        jobs = _count(job.state for job in run.jobs())
        limits = run.config.limits
        typer.echo(f"run       {run.path} ({run.config.name}, strategy {run.config.strategy.name})")
        typer.echo(f"nodes     {graph.number_of_nodes()} ({_fmt_counts(statuses)})")
        typer.echo(f"evals     {evals}" + (f" / {limits.max_evals}" if limits.max_evals else ""))
        expansions = run.expansion_attempts()
        limit = f" / {limits.max_expansions}" if limits.max_expansions else ""
        failed = sum(1 for j in run.jobs(["done"]) if j.kind == "expand" and j.result
                     and "node_id" not in j.result) + statuses.get("rejected", 0)  # fmt: skip
        typer.echo(f"expansions {expansions}{limit} ({failed} made no child)")
        if best is not None:
            a = graph.nodes[best]
            confirmed = graph.graph.get("confirmed") == best
            confirmed = " (confirmed on held-out tasks)" if confirmed else ""
            typer.echo(f"best      node {best}: {Score(a['passed'], a['total'])}{confirmed}")
        spend = f"${run.spend_usd():.2f}"
        if limits.budget_usd:
            spend += f" / ${limits.budget_usd:.2f}"
        typer.echo(f"spend     {spend}")
        for label, text in spend_lines(run, best):
            typer.echo(f"{label:<9} {text}")
        tampered = run.tampered_evaluations()
        if tampered:
            nodes = sorted({e.node_id for e in tampered})
            typer.secho(
                f"tampered  {len(tampered)} evaluation(s) on node(s) "
                f"{', '.join(map(str, nodes))}: the judge caught the patch interfering with "
                "the test run; counted as failures, never best, never exported",
                fg="red", bold=True,
            )  # fmt: skip
        typer.echo(f"jobs      {_fmt_counts(jobs) or 'none'}")
        for line in outage_lines(run):
            typer.secho(line, fg="yellow" if line.startswith("PAUSED") else None)
        placed = run.events_of("job_placed")  # the ray executor: which node ran each job
        if placed:
            by_node = _count(p["node"] for p in placed)
            shown = ", ".join(f"{node}: {n} jobs" for node, n in sorted(by_node.items()))
            typer.echo(f"on nodes  {shown}")
        for event in run.events(limit=5):
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(event.pop("ts")))
            kind = event.pop("kind")
            extra = " ".join(f"{k}={v}" for k, v in event.items())
            typer.echo(f"  {when}  {kind} {extra}".rstrip())


def tree(run_dir: RunDir) -> None:
    """The lineage as a terminal tree: score, children and cost of each node."""
    with Run.open(run_dir) as run:
        graph = lineage.build_lineage(run)
    typer.echo("\n".join(tree_lines(graph)))


def show(
    run_dir: RunDir,
    node: Annotated[str, typer.Argument(help="Node id, or a job id (eval-..., expand-...).")],
    no_diff: Annotated[bool, typer.Option("--no-diff", help="Leave out the diff.")] = False,
    trajectory: Annotated[
        str | None,
        typer.Option("--trajectory", help="Show the agent's trajectory on this task instead."),
    ] = None,
) -> None:
    """A node's metadata, origin, diff against its parent and evaluations."""
    with Run.open(run_dir) as run:
        if node.startswith(("eval-", "expand-")):  # a job: its state and the outages it met
            typer.echo("\n".join(job_lines(run, node)))
            return
        n = run.node(node)
        if trajectory is not None:
            from dgm.report.trajectory import print_trajectory

            print_trajectory(run, n.id, trajectory, typer.secho)
            return
        score = run.score(n.id)
        usage = run.usage_by("node_id").get(n.id, {})
        typer.echo(f"node      {n.id}")
        typer.echo(f"parent    {n.parent_id if n.parent_id is not None else '-'}")
        typer.echo(f"commit    {n.commit}")
        typer.echo(f"depth     {n.depth}")
        typer.echo(f"status    {n.status}")
        typer.echo(f"created   {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(n.created_at))}")
        typer.echo(f"score     {score}")
        if score.tampered:
            typer.secho(
                f"TAMPERED  {score.tampered} evaluation(s): the judge caught this agent's patch "
                "interfering with the test run; never best, never exported",
                fg="red", bold=True,
            )  # fmt: skip
        typer.echo(f"children  {', '.join(str(c.id) for c in run.children(n.id)) or '-'}")
        if usage:
            typer.echo(
                f"llm       {usage['calls']} calls, {usage['input_tokens']} in / "
                f"{usage['output_tokens']} out tokens, ${usage['cost_usd']:.4f}"
            )
        if n.job_id:
            made = job_spend(run, n.job_id)
            typer.echo(f"expansion ${made.cost_usd:.4f}, {made.calls} calls; {made.tokens_text()}")
        for key, value in n.meta.items():
            if key not in (WARNINGS, "harvested_tools"):
                typer.echo(f"{key:<9} {value}")
        if n.meta.get("harvested_tools"):
            tools = ", ".join(map(str, n.meta["harvested_tools"]))
            typer.echo(f"harvested {tools} (runtime tools its parent wrote in solved tasks, "
                       "kept with no LLM call)")  # fmt: skip
        _echo_warnings("tamper scan of this node's diff (warnings, not a verdict)", n.meta)
        typer.echo("\norigin:")
        typer.echo(_indent(n.origin))
        evaluations = run.evaluations(n.id)
        if evaluations:
            typer.echo("\nevaluations:")
            for e in evaluations:
                verdict = "PASS" if e.resolved else ("EMPTY" if e.empty_patch else "fail")
                verdict = "TAMPERED" if e.tampered else verdict
                tests = f"{e.tests_passed}/{e.tests_total} tests" if e.tests_total else ""
                spent = evaluation_spend(e.details, e.cost_usd)
                typer.secho(
                    f"  {verdict:<5} {e.task_id:<40} stage {e.stage}  {tests:<12} "
                    f"${spent.cost_usd:.4f}  {spent.tokens_text()}",
                    fg="red" if e.tampered else None, bold=e.tampered,
                )  # fmt: skip
                if e.tampered:
                    evidence = " ".join(e.tamper_evidence.split())[:500]
                    typer.secho(f"      the judge's evidence: {evidence}", fg="red")
                _echo_warnings("  tamper scan of its patch", e.details, indent="      ")
                if isinstance(again := e.details.get("rejudge"), dict):
                    why = ", ".join(map(str, again.get("why") or []))
                    typer.echo(f"      re-judged with extra mutated copies ({why}): "
                               f"{again.get('outcome')}")  # fmt: skip
        if not no_diff and n.parent_id is not None:
            typer.echo(f"\ndiff against node {n.parent_id}:")
            typer.echo(run.diff(n.id))


WARNINGS = "tamper_warnings"


def _echo_warnings(title: str, holder: dict, indent: str = "  ") -> None:
    """The static tamper scan's warnings (dgm/jobs/tamper_scan.py), one line each."""
    warnings = holder.get(WARNINGS) or []
    if not warnings:
        return
    typer.secho(f"{title}: {len(warnings)} warning(s)", fg="yellow")
    for w in warnings[:20]:
        typer.echo(f"{indent}{w.get('kind')}: {w.get('file')}: {w.get('why')}  {w.get('line')}")


def diff(
    run_dir: RunDir,
    a: Annotated[str, typer.Argument(help="Old node id.")],
    b: Annotated[str, typer.Argument(help="New node id.")],
) -> None:
    """The diff between two nodes' codebases."""
    with Run.open(run_dir) as run:
        typer.echo(run.diff(run.node(a).id, run.node(b).id))


def _count(values) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return counts


def _fmt_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())
