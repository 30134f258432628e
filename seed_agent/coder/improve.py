"""`run.py improve`: this agent's own improvement procedure (dgm's hyperagent mode).

The harness gives a writable copy of this agent's source (--workdir), the history of its
lineage (--history, format dgm-history/1: history.json plus redacted trajectories and
test outputs of failed tasks) and one LLM endpoint. Like dgm's built-in procedure, it
  1. picks what to improve: a failed task of the history (or a special target),
  2. asks the model for a diagnosis (a JSON object; same prompt shape as dgm's),
  3. solves the diagnosis' problem statement on its own source with its own agent loop.
The harness takes the diff; the child may rewrite this file, and so its own procedure.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from typing import Dict, List, Optional

from .llm import LLMClient
from .loop import Agent
from .trajectory import Trajectory

FAILED_TASKS_SHOWN = 1
"""How many failed tasks the diagnosis sees (dgm's built-in procedure shows one)."""
SOURCE_SUFFIXES = (".py", ".txt", ".toml", ".md", ".json", ".cfg")
SOURCE_LIMIT, TRAJECTORY_LIMIT, TEST_OUTPUT_LIMIT = 60_000, 24_000, 8_000

DIAGNOSIS_SYSTEM = (
    "You are an expert in building coding agents. You read a coding agent's source code "
    "and a record of how it did on a task, find why it failed, and propose ONE general "
    "improvement to the agent itself (its tools, prompts or loop) that would help it on "
    "many tasks, not only this one. Answer with a single JSON object and nothing else."
)
DIAGNOSIS_KEYS = ("log_summarization", "potential_improvements", "improvement_proposal",
                  "implementation_suggestion", "problem_description")  # fmt: skip
PREAMBLE = (
    "The repository in your working directory is the source code of the coding agent "
    "that you are (its entry points are named in agent.toml). Improve the agent as "
    "follows.\n\n"
)
FOOTER = (
    "\n\nKeep the agent working: its own tests (the `smoke` command in agent.toml) must "
    "still pass, and add a test for what you change."
)
SPECIAL = {
    "empty_patches": "The coding agent sometimes finishes a task without changing any file, "
    "which always fails the task. Make the agent notice, before it finishes, that it has not "
    "modified the repository (for example by checking `git status` or `git diff`), and in "
    "that case keep working on the task instead of finishing.",
    "stochasticity": "The coding agent's results vary between runs of similar tasks: it "
    "sometimes stops before verifying its solution. Make the agent more reliable: after "
    "editing, it should run the relevant tests or a quick check of its own, read the "
    "output, and fix what fails before it finishes.",
}


def read(root: str, rel: Optional[str], limit: int) -> str:
    """A file of the history (never through a link), cut in the middle at `limit`."""
    if not rel:
        return "(not available)"
    path = os.path.join(root, rel)
    if os.path.islink(path) or not os.path.isfile(path):
        return "(not available)"
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read(4 * limit)
    half = limit // 2
    return text if len(text) <= limit else f"{text[:half]}\n[... cut ...]\n{text[-half:]}"


def agent_source(root: str, limit: int = SOURCE_LIMIT) -> str:
    chunks: List[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(folder, name), root)
            if name.endswith(SOURCE_SUFFIXES) and not os.path.islink(os.path.join(root, rel)):
                chunks.append(f"## {rel}\n```\n{read(root, rel, limit)}\n```")
    text = "\n".join(chunks)
    return text if len(text) <= limit else text[:limit] + "\n## (more files left out)"


def choose(history: Dict) -> Dict:
    """What to improve: a failed task of this node (else of its lineage) most of the
    time, as dgm's built-in procedure; seeded by node and ordinal, so a re-run agrees."""
    ordinal = (history.get("expansion") or {}).get("ordinal", 0)
    rng = random.Random(f"{history.get('node')}:{ordinal}")
    failed = history.get("failed_tasks") or []
    own = [t for t in failed if t.get("node") == history.get("node")] or failed
    results = (history.get("lineage") or [{}])[-1].get("results") or []
    empty = [r for r in results if r.get("empty_patch")]
    if not own:
        return {"kind": "stochasticity", "tasks": []}
    if empty and len(empty) >= 0.1 * len(results) and rng.random() >= 0.75:
        return {"kind": "empty_patches", "tasks": []}
    start = rng.randrange(len(own))
    shown = (own[start:] + own[:start])[: FAILED_TASKS_SHOWN or len(own)]
    return {"kind": "task", "tasks": shown}


def diagnosis_messages(history: Dict, root: str, source: str, target: Dict) -> List[Dict]:
    parts = ["# The coding agent's source code", source]
    for task in target["tasks"]:
        parts += [
            f"# The task it was given ({task.get('task_id')})",
            task.get("statement") or "(not available)",
            "# What the agent did (its trajectory, shortened)",
            read(root, task.get("trajectory"), TRAJECTORY_LIMIT),
            "# The hidden tests' results after the agent finished",
            read(root, task.get("test_output"), TEST_OUTPUT_LIMIT),
        ]
    expansion = (history.get("expansion") or {}).get("ordinal", 0)
    parts += [
        "# This expansion",
        f"node {history.get('node')}, expansion ordinal {expansion}, "
        f"budget left {json.dumps(history.get('budget') or {}, sort_keys=True)}",
        "# The agent's lineage (root first), its children and siblings",
        "\n".join(summary(history)),
        "Answer with a JSON object with these string fields: "
        + ", ".join(f'"{k}"' for k in DIAGNOSIS_KEYS)
        + ". `problem_description` must describe the improvement to the agent as a task for "
        "a software engineer working on the agent's own repository, without mentioning "
        "this particular task's names or test cases.",
    ]
    return [{"role": "system", "content": DIAGNOSIS_SYSTEM},
            {"role": "user", "content": "\n\n".join(parts)}]  # fmt: skip


def summary(history: Dict) -> List[str]:
    """One line per node: its score, failed tasks and whether it changed this procedure."""
    lines = []
    for key in ("lineage", "children", "siblings"):
        for node in history.get(key) or []:
            score = node.get("score") or {}
            failed = [r.get("task_id") for r in node.get("results") or [] if not r.get("resolved")]
            mark = "; changed its improve procedure" if node.get("improve_changed") else ""
            lines.append(f"- {key} node {node.get('id')}: {score.get('resolved')}/"
                         f"{score.get('total')} solved; failed: "
                         f"{', '.join(map(str, failed)) or '-'}{mark}")  # fmt: skip
    for failure in history.get("failed_expansions") or []:
        lines.append(f"- failed expansion {failure.get('ordinal')}: {failure.get('status')}")
    return lines or ["(none)"]


def parse_diagnosis(text: str) -> Dict[str, str]:
    block = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.S)
    data = json.loads(block.group(1) if block else text[text.find("{") : text.rfind("}") + 1])
    if not isinstance(data, dict) or not str(data.get("problem_description", "")).strip():
        raise ValueError("the diagnosis has no problem_description")
    return {k: str(v) for k, v in data.items()}


def statement_of(diagnosis: Dict[str, str]) -> str:
    text = diagnosis["problem_description"].strip()
    suggestion = diagnosis.get("implementation_suggestion", "").strip()
    return text + ("\n\nImplementation suggestion:\n" + suggestion if suggestion else "")


def improve(llm: LLMClient, workdir: str, history_dir: str, out_dir: str, task: Dict) -> str:
    """Diagnose, then solve on our own source; returns the self-edit's exit status."""
    with open(os.path.join(history_dir, "history.json"), encoding="utf-8") as f:
        history = json.load(f)
    time_limit_s = float(task.get("time_limit_s") or 1800)
    target = choose(history)
    if target["kind"] == "task":
        messages = diagnosis_messages(history, history_dir, agent_source(workdir), target)
        answer = llm.chat(messages, [], time.monotonic() + min(900.0, time_limit_s))
        diagnosis = parse_diagnosis(answer["choices"][0]["message"].get("content") or "")
        with open(os.path.join(out_dir, "diagnosis.json"), "w", encoding="utf-8") as f:
            json.dump({"target": target, "diagnosis": diagnosis}, f, indent=2)
        statement = statement_of(diagnosis)
    else:
        statement = SPECIAL[target["kind"]]
    with open(os.path.join(out_dir, "problem_statement.md"), "w", encoding="utf-8") as f:
        f.write(statement + "\n")
    solve = dict(task, id=task.get("id") or "improve", language="python",
                 problem_statement=PREAMBLE + statement + FOOTER)  # fmt: skip
    model = os.environ.get("DGM_LLM_MODEL") or "default"
    return Agent(llm, solve, workdir, Trajectory(out_dir, solve, model)).run()
