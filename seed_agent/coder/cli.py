"""Command line: `run.py solve --workdir W --task T --out O`, and
`run.py improve --workdir W --history H --out O [--task T]` (see improve.py).

Process exit code: 0 when the run ended in an orderly way (its exit_status, in
trajectory.json, says how), 1 when the agent itself crashed, 2 for a bad invocation.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import traceback
from typing import Dict, List, Optional

from .llm import LLMClient, LLMError
from .loop import Agent, Interrupted
from .trajectory import Trajectory


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="run.py", description="The dgm seed coding agent.")
    commands = parser.add_subparsers(dest="command", required=True)
    solve = commands.add_parser("solve", help="work on a task in a repository")
    solve.add_argument("--workdir", required=True, help="the repository to work in")
    solve.add_argument("--task", required=True, help="task JSON file")
    solve.add_argument("--out", required=True, help="output dir for trajectory.json")
    solve.add_argument("--max-steps", type=int, help="override the task's max_steps")
    solve.add_argument("--time-limit", type=float, help="override the task's time_limit_s")
    improve = commands.add_parser("improve", help="improve this agent's own source")
    improve.add_argument("--workdir", required=True, help="a writable copy of this agent")
    improve.add_argument("--history", required=True, help="the lineage's history folder")
    improve.add_argument("--out", required=True, help="output dir for trajectory.json")
    improve.add_argument("--task", help="JSON file with max_steps and time_limit_s")
    args = parser.parse_args(argv)
    if args.command == "improve":
        return _improve(args)

    try:
        task = _load_task(args.task)
    except (OSError, ValueError) as exc:
        print(f"error: cannot read the task file {args.task}: {exc}", file=sys.stderr)
        return 2
    if not os.path.isdir(args.workdir):
        print(f"error: workdir {args.workdir} is not a directory", file=sys.stderr)
        return 2
    if args.max_steps is not None:
        task["max_steps"] = args.max_steps
    if args.time_limit is not None:
        task["time_limit_s"] = args.time_limit
    os.makedirs(args.out, exist_ok=True)
    return _solve(task, args.workdir, args.out)


def _solve(task: Dict, workdir: str, out_dir: str) -> int:
    model = os.environ.get("DGM_LLM_MODEL") or "default"
    trajectory = Trajectory(out_dir, task, model)
    try:
        llm = LLMClient.from_env(os.environ)
    except LLMError as exc:
        print(f"error: {exc}", file=sys.stderr)
        trajectory.finish(exc.status, str(exc))
        return 2
    signal.signal(signal.SIGTERM, _raise_interrupted)
    try:
        status = Agent(llm, task, workdir, trajectory).run()
    except Exception:  # a bug in the agent: keep the record of what happened
        trajectory.finish("agent_error", traceback.format_exc())
        traceback.print_exc()
        return 1
    print(f"[agent] exit status: {status}", file=sys.stderr)
    return 0


def _improve(args: argparse.Namespace) -> int:
    from .improve import improve

    if not os.path.isfile(os.path.join(args.history, "history.json")):
        print(f"error: {args.history} has no history.json", file=sys.stderr)
        return 2
    try:
        task = _load_task(args.task) if args.task else {}
        llm = LLMClient.from_env(os.environ)
    except (OSError, ValueError, LLMError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    signal.signal(signal.SIGTERM, _raise_interrupted)
    try:
        status = improve(llm, args.workdir, args.history, args.out, task)
    except LLMError as exc:  # the diagnosis call failed: nothing was changed
        print(f"error: the diagnosis failed: {exc}", file=sys.stderr)
        return 1
    except Exception:
        traceback.print_exc()
        return 1
    print(f"[agent] improve: exit status {status}", file=sys.stderr)
    return 0


def _load_task(path: str) -> Dict:
    with open(path, encoding="utf-8") as f:
        task = json.load(f)
    if not isinstance(task, dict) or not task.get("problem_statement"):
        raise ValueError("expected a JSON object with a problem_statement")
    task.setdefault("language", "")
    return task


def _raise_interrupted(signum, frame) -> None:
    raise Interrupted()
