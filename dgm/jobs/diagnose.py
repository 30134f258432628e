"""What to improve, and the diagnosis that turns it into a problem statement.

A self-improvement step starts from evidence about the parent: a task it failed (its
trajectory and test output), or one of DGM's special entries: many empty patches,
inconsistent results, or conversations that outgrew the context window. A diagnosis
model reads that evidence with the agent's own source and answers JSON, which becomes
the problem statement the parent agent then solves on a copy of its own code.

By default the diagnosis sees the test *output* only; DGM also shows the hidden test
sources (`expand.diagnosis_sees_tests = true`).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dgm import key_redaction, safefs
from dgm.jobs.hidden_redaction import HiddenSource, redact, results_for_diagnosis
from dgm.store import Evaluation

SOURCE_SUFFIXES = {".py", ".txt", ".toml", ".md", ".json", ".cfg"}
AGENT_CODE_LIMIT = 60_000
TRAJECTORY_LIMIT = 24_000
TEST_OUTPUT_LIMIT = 8_000
RAW_OUTPUT_LIMIT = 400_000

EMPTY_PATCH_SHARE = 0.1
"""DGM's rule: at least this share of empty patches makes `empty_patches` a candidate."""

SPECIAL_STATEMENTS = {
    "empty_patches": (
        "The coding agent sometimes finishes a task without changing any file, which "
        "always fails the task. Make the agent notice, before it finishes, that it has "
        "not modified the repository (for example by checking `git status` or `git diff`), "
        "and in that case keep working on the task instead of finishing."
    ),
    "stochasticity": (
        "The coding agent's results vary between runs of similar tasks: it sometimes "
        "stops before verifying its solution. Make the agent more reliable: after editing, "
        "it should run the relevant tests or a quick check of its own, read the output, "
        "and fix what fails before it finishes."
    ),
    "context_length": (
        "The coding agent's conversations grow past the model's context window on long "
        "tasks, and the run then fails. Make the agent keep its context small: shorten or "
        "summarise old tool outputs while keeping the latest ones whole."
    ),
}

DIAGNOSIS_SYSTEM = (
    "You are an expert in building coding agents. You read a coding agent's source code "
    "and a record of how it did on a task, find why it failed, and propose ONE general "
    "improvement to the agent itself (its tools, prompts or loop) that would help it on "
    "many tasks, not only this one. Answer with a single JSON object and nothing else."
)

TAMPER_HEADER = "# The judge caught this agent tampering with the tests"
TAMPER_NOTE = (
    "On this task the judge caught the agent's patch interfering with the test run: it "
    "tampered with the tests instead of solving the task. Tampering is detected and never "
    "rewarded: the task counts as failed, and an agent caught tampering is never chosen "
    "as best nor exported. The improvement must make the agent solve tasks by changing "
    "the solution code only, and never touch, skip, patch or imitate tests, test runners "
    "or their reports, nor end the process early."
)

GROUP_HEADER = (
    "# Experience of the agents improved alongside this one (reuse what worked, avoid "
    "what broke tasks)"
)

HISTORY_HEADER = (
    "# The agent's history: its lineage's results and changes, its children and siblings, "
    "its failed tasks and the budget left"
)

DIAGNOSIS_KEYS = (
    "log_summarization",
    "potential_improvements",
    "improvement_proposal",
    "implementation_suggestion",
    "problem_description",
)


@dataclass(frozen=True)
class ImprovementTarget:
    """The evidence a self-improvement step starts from (serialisable)."""

    kind: str
    """`task`, `empty_patches`, `stochasticity`, `context_length` or `harvest`."""
    task_id: str | None = None
    task_statement: str | None = None
    trajectory: str | None = None
    test_output: str | None = None
    hidden_tests: str | None = None
    group_experience: str | None = None
    """GEA: what the other members of the parent's group changed and which tasks that
    fixed or broke (dgm/strategies/gea.py), for the diagnosis and the improvement step."""
    tampered: bool = False
    """The judge caught the agent's patch on this task interfering with the test run.
    How it knew (its evidence, its canaries) never reaches a prompt: a next generation
    that learnt the checks could spare them."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """`harvest`: the runtime tools to keep (dgm/loop/harvest_target.py picks them): name,
    sha256, tool_json, tool_py, tasks (the solved tasks they came from)."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.tampered:  # job ids (hashed from this) stay what they were before
            del data["tampered"]
        if not self.tools:  # the same for every kind but harvest
            del data["tools"]
        return data


def choose_target(
    evaluations: list[Evaluation],
    logs_root: Path,
    rng: random.Random,
    task_statement: Any = None,
    hidden_tests: Any = None,
    hidden_sources: Any = None,
) -> ImprovementTarget:
    """Pick what the parent should improve, from its own evaluations.

    `task_statement(task_id)` and `hidden_tests(task_id)` look up a task's text and its
    hidden test sources (the latter only passed when the diagnosis may see tests).
    Otherwise the test output is redacted (see hidden_redaction.py) against
    `hidden_sources(task_id)`, the pristine hidden files' texts; without them the
    diagnosis gets the test names alone.
    """
    if not evaluations:
        return ImprovementTarget("stochasticity")
    forged = [e for e in evaluations if e.tampered]
    failed = [e for e in evaluations if not e.resolved]
    empty = [e for e in evaluations if e.empty_patch]
    context_hits = [e for e in failed if _hit_context_limit(logs_root, e)]
    candidates: list[str] = []
    if failed:
        candidates.append("task")
    if len(empty) >= EMPTY_PATCH_SHARE * len(evaluations) and empty:
        candidates.append("empty_patches")
    if context_hits:
        candidates.append("context_length")
    if forged:  # caught tampering: that is what the next step must hear about first
        evaluation = rng.choice(forged)
    else:
        if not candidates:
            return ImprovementTarget("stochasticity")  # solved everything: reliability
        # A failed task is the main source, as in DGM; the special entries come up sometimes.
        kind = "task" if "task" in candidates and rng.random() < 0.75 else rng.choice(candidates)
        if kind != "task":
            return ImprovementTarget(kind)
        evaluation = rng.choice(failed)
    log_dir = logs_root / evaluation.log_dir if evaluation.log_dir else None
    trajectory = _read_trajectory(log_dir)
    # The judge's canaries are as secret as the hidden tests: no line naming one passes.
    canaries = [str(c) for c in evaluation.details.get("canaries") or []]
    if hidden_tests is not None:  # DGM's way, enabled explicitly: tests are shown anyway
        test_output = _read_text(log_dir, "test_output.txt", TEST_OUTPUT_LIMIT)
        if test_output and canaries:  # ... but never the judge's canaries
            test_output = redact(test_output, HiddenSource(canaries), line_limit=2_000)
    else:
        texts = hidden_sources(evaluation.task_id) if hidden_sources else None
        hidden = HiddenSource([*texts, *canaries]) if texts is not None else None
        raw = _read_text(log_dir, "test_output.txt", RAW_OUTPUT_LIMIT)
        tests = {name: status for name, status in (evaluation.details.get("tests") or {}).items()
                 if not any(c in name for c in canaries)}  # fmt: skip
        test_output = results_for_diagnosis(tests, raw, hidden)
        if trajectory and hidden is not None:
            trajectory = redact(trajectory, hidden, line_limit=2_000, scan=5_000)
    # An agent's output can quote a key it came across: none reaches a prompt.
    trajectory = key_redaction.scrub(trajectory) if trajectory else trajectory
    test_output = key_redaction.scrub(test_output) if test_output else test_output
    return ImprovementTarget(
        "task",
        task_id=evaluation.task_id,
        task_statement=task_statement(evaluation.task_id) if task_statement else None,
        trajectory=trajectory,
        test_output=test_output,
        hidden_tests=hidden_tests(evaluation.task_id) if hidden_tests else None,
        tampered=evaluation.tampered,
    )


def diagnosis_request(
    target: ImprovementTarget, agent_dir: Path, history: str | None = None
) -> dict[str, Any]:
    """The chat request for the diagnosis model (role `diagnose`); `history` is the
    parent's rendered history (dgm/jobs/history_format.py), already redacted."""
    parts = [
        "# The coding agent's source code",
        agent_source(agent_dir),
        f"# The task it was given ({target.task_id})",
        target.task_statement or "(not available)",
        "# What the agent did (its trajectory, shortened)",
        target.trajectory or "(not available)",
        "# The hidden tests' results after the agent finished",
        target.test_output or "(not available)",
    ]
    if target.tampered:
        parts += [TAMPER_HEADER, TAMPER_NOTE]
    if target.hidden_tests:
        parts += ["# The hidden tests' source", target.hidden_tests]
    if target.group_experience:
        parts += [GROUP_HEADER, target.group_experience]
    if history:
        parts += [HISTORY_HEADER, history]
    parts.append(
        "Answer with a JSON object with these string fields: "
        + ", ".join(f'"{k}"' for k in DIAGNOSIS_KEYS)
        + ". `problem_description` must describe the improvement to the agent as a task for "
        "a software engineer working on the agent's own repository, without mentioning "
        "this particular task's names or test cases."
    )
    return {
        "messages": [
            {"role": "system", "content": DIAGNOSIS_SYSTEM},
            {"role": "user", "content": "\n\n".join(parts)},
        ],
        "max_tokens": 4096,
    }


def parse_diagnosis(text: str) -> dict[str, str]:
    """The JSON object in a model answer (bare, or inside a ```json block)."""
    block = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.S)
    candidate = block.group(1) if block else text[text.find("{") : text.rfind("}") + 1]
    try:
        data = json.loads(candidate)
    except ValueError:
        raise ValueError(f"the diagnosis is not JSON: {text[:200]!r}") from None
    if not isinstance(data, dict) or not str(data.get("problem_description", "")).strip():
        raise ValueError("the diagnosis has no problem_description")
    return {k: str(v) for k, v in data.items()}


def problem_statement(target: ImprovementTarget, diagnosis: dict[str, str] | None) -> str:
    """The task the parent agent solves on its own code."""
    if diagnosis is None:
        text = SPECIAL_STATEMENTS[target.kind]
    else:
        text = diagnosis["problem_description"].strip()
        suggestion = diagnosis.get("implementation_suggestion", "").strip()
        if suggestion:
            text += "\n\nImplementation suggestion:\n" + suggestion
    if target.tampered:  # whatever the diagnosis model made of it, the step hears it
        text += f"\n\n{TAMPER_HEADER}\n{TAMPER_NOTE}"
    if target.group_experience:
        text += f"\n\n{GROUP_HEADER}\n{target.group_experience}"
    return text


def agent_source(agent_dir: Path, limit: int = AGENT_CODE_LIMIT) -> str:
    """The agent's text files, each under a header, cut at `limit` characters.

    The agent wrote these files: links and special files are skipped, never followed
    (a `notes.md -> /proc/self/environ` must not put the host's keys in a prompt)."""
    chunks, used = [], 0
    for rel in safefs.walk_files(agent_dir):
        if Path(rel).suffix not in SOURCE_SUFFIXES:
            continue
        try:
            body = safefs.read_text(agent_dir, rel, limit)
        except safefs.UnsafeFile:
            continue
        chunk = f"## {rel}\n```\n{body}\n```"
        if used + len(chunk) > limit:
            chunks.append(f"## (more files left out: the code passed {limit} characters)")
            break
        chunks.append(chunk)
        used += len(chunk)
    return "\n".join(chunks)


def _read_text(log_dir: Path | None, name: str, limit: int) -> str | None:
    text = safefs.read_head(log_dir / name, 4 * limit) if log_dir else None
    return None if text is None else _shorten(text, limit)


def _read_trajectory(log_dir: Path | None) -> str | None:
    text = safefs.read_text_or_none(log_dir / "trajectory.json") if log_dir else None
    return trajectory_text(text)


def trajectory_text(text: str | None) -> str | None:
    """A `trajectory.json`'s text as the diagnosis reads it: one line per message, cut."""
    try:
        data = json.loads(text) if text else None
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    lines = [f"exit status: {data.get('exit_status')} {data.get('exit_message') or ''}"]
    for message in data.get("messages", [])[1:]:  # the system prompt is in the source
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
        line = f"[{message.get('role')}] {content or ''}"
        for call in message.get("tool_calls") or []:
            fn = call.get("function", {}) if isinstance(call, dict) else {}
            line += f"\n  -> {fn.get('name')}({str(fn.get('arguments', ''))[:500]})"
        lines.append(_shorten(line, 2_000))
    return _shorten("\n".join(lines), TRAJECTORY_LIMIT)


def _hit_context_limit(logs_root: Path, evaluation: Evaluation) -> bool:
    if not evaluation.log_dir:
        return False
    text = safefs.read_text_or_none(logs_root / evaluation.log_dir / "trajectory.json")
    try:
        message = str(json.loads(text or "{}").get("exit_message") or "")
    except (ValueError, AttributeError):
        return False
    return bool(re.search(r"context (length|window)|too long|maximum context", message, re.I))


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters left out ...]\n{text[-half:]}"
