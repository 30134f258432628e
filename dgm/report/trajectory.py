"""`dgm show RUN NODE --trajectory TASK`: one agent trajectory, readable in a terminal."""

from __future__ import annotations

import json
from collections.abc import Callable

from dgm.errors import NotFoundError
from dgm.report.logs import EvalLogs, Trajectory, load_trajectory
from dgm.store import Evaluation, Run

Echo = Callable[..., None]


def find_evaluation(run: Run, node_id: int, task: str) -> Evaluation:
    """The node's latest evaluation on `task` (an exact id, or a unique part of one)."""
    evaluations = run.evaluations(node_id)
    exact = [e for e in evaluations if e.task_id == task]
    if not exact:
        matching = {e.task_id for e in evaluations if task in e.task_id}
        if len(matching) == 1:
            exact = [e for e in evaluations if e.task_id in matching]
        elif matching:
            raise NotFoundError(
                f"task {task!r} matches several tasks of node {node_id}: "
                + ", ".join(sorted(matching)[:8]),
                "give the full task id",
            )
    if not exact:
        tasks = sorted({e.task_id for e in evaluations})
        hint = f"node {node_id} was evaluated on: {', '.join(tasks[:10])}" if tasks else None
        raise NotFoundError(
            f"node {node_id} has no evaluation on task {task!r}",
            hint or "this node has no evaluations yet; see `dgm show RUN NODE`",
        )
    return exact[-1]


def print_trajectory(run: Run, node_id: int, task: str, echo: Echo, width: int = 400) -> None:
    """Print the trajectory of node `node_id` on `task`; tool outputs cut to `width` chars."""
    evaluation = find_evaluation(run, node_id, task)
    logs = EvalLogs.of(run.path, evaluation.log_dir)
    traj = load_trajectory(logs) if logs else None
    verdict = (
        "PASS" if evaluation.resolved else ("EMPTY PATCH" if evaluation.empty_patch else "FAIL")
    )
    echo(f"node {node_id} on {evaluation.task_id}: {verdict}", bold=True)
    if traj is None:
        where = logs.folder if logs else "(no log folder recorded)"
        raise NotFoundError(
            f"no trajectory for node {node_id} on {evaluation.task_id}: "
            f"neither trajectory.json nor llm.jsonl in {where}",
            "the agent may have crashed before writing it; see the test output there",
        )
    for line in _header(traj):
        echo(line)
    for message in traj.prompt:
        echo(f"\n[{message['role']}]", fg="cyan")
        echo(_cut(message["content"], width))
    for turn in traj.turns:
        timing = f"{turn.llm_s:.1f} s" if turn.llm_s is not None else "? s"
        tokens = _tokens(turn.usage)
        echo(f"\n── step {turn.step}  ({timing}{', ' + tokens if tokens else ''})", fg="cyan")
        if turn.content.strip():
            echo(_indent(_cut(turn.content, width)))
        for call in turn.tool_calls:
            status = {True: "ok", False: "error", None: ""}[call.ok]
            took = f" {call.duration_s:.1f} s" if call.duration_s is not None else ""
            echo(
                f"  → {call.name}({_cut(_args(call.arguments), 200)})  {status}{took}", fg="yellow"
            )
            if call.output is not None:
                echo(_indent(_cut(call.output, width), "    │ "))
        for note in turn.notes:
            echo(_indent(_cut(note, width), "  [harness] "), fg="magenta")
    echo(f"\nexit: {traj.exit_status or 'unknown'}  {_cut(traj.exit_message, width)}", bold=True)


def _header(traj: Trajectory) -> list[str]:
    usage = traj.usage
    lines = [
        f"model     {traj.model or '?'}",
        f"steps     {len(traj.turns)}"
        + (f"   duration {traj.duration_s:.1f} s" if traj.duration_s is not None else ""),
    ]
    if usage:
        lines.append(
            f"usage     {usage.get('llm_calls', '?')} calls, "
            f"{usage.get('prompt_tokens', 0)} in / {usage.get('completion_tokens', 0)} out tokens"
        )
    lines.append(f"source    {traj.source}")
    return lines


def _tokens(usage: dict) -> str:
    if not usage or usage.get("prompt_tokens") is None:
        return ""
    return f"{usage.get('prompt_tokens')} in / {usage.get('completion_tokens')} out tokens"


def _args(arguments: str) -> str:
    """Tool arguments compactly: `key=value, ...` when they are a JSON object."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return arguments
    if not isinstance(parsed, dict):
        return arguments
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in parsed.items())


def _cut(text: str, width: int) -> str:
    """At most `width` characters and 12 lines, saying how much was left out."""
    lines = text.splitlines()
    short = "\n".join(lines[:12])
    if len(short) > width:
        short = short[:width]
    rest = text[len(short) :].strip()
    return short + (f" [... {len(rest)} more chars]" if rest else "")


def _indent(text: str, prefix: str = "  ") -> str:
    return "\n".join(prefix + line for line in text.splitlines()) if text else prefix.rstrip()
