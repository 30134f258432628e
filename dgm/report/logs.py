"""What an evaluation leaves in its log folder, and how to read it back.

All knowledge of the per-evaluation log layout lives here, so a change in what the eval
job writes is a change in this one file. An evaluation's `log_dir` (relative to the run
directory) holds, when the job got that far:

    trajectory.json   the agent's own record (seed_agent/coder/trajectory.py,
                      format "dgm-trajectory/1": messages, steps, usage, exit status)
    llm.jsonl         the gateway's exchange log (dgm/gateway/exchange_log.py)
    test_output.txt   the judge's test run
    patch.diff        the agent's change to the task workspace

Every file may be missing (a crashed agent, a run from an older version); readers return
None or an empty result rather than failing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dgm import safefs

TRAJECTORY = "trajectory.json"
LLM_LOG = "llm.jsonl"
TEST_OUTPUT = "test_output.txt"
PATCH = "patch.diff"
TRAJECTORY_LIMIT = 64 * 1024 * 1024
LLM_LOG_LIMIT = 256 * 1024 * 1024


@dataclass(frozen=True)
class EvalLogs:
    """The files of one evaluation's log folder that exist."""

    folder: Path

    @classmethod
    def of(cls, run_dir: Path, log_dir: str | None) -> EvalLogs | None:
        if not log_dir:
            return None
        return cls(Path(run_dir) / log_dir)

    def file(self, name: str) -> Path | None:
        path = self.folder / name
        return path if safefs.is_regular(path) else None  # a link is never followed

    @property
    def trajectory(self) -> Path | None:
        return self.file(TRAJECTORY)

    @property
    def llm(self) -> Path | None:
        return self.file(LLM_LOG)

    @property
    def test_output(self) -> Path | None:
        return self.file(TEST_OUTPUT)

    @property
    def patch(self) -> Path | None:
        return self.file(PATCH)


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str
    output: str | None = None
    ok: bool | None = None
    duration_s: float | None = None


@dataclass
class Turn:
    """One model reply: its text, the tools it called (with their outputs), and usage."""

    step: int
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """User messages the harness added after this turn (e.g. 'call a tool')."""
    llm_s: float | None = None
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass
class Trajectory:
    source: str
    """Which file it was read from: trajectory.json, or llm.jsonl as a fallback."""
    task_id: str | None = None
    model: str | None = None
    exit_status: str | None = None
    exit_message: str = ""
    duration_s: float | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    prompt: list[dict[str, str]] = field(default_factory=list)
    """The system and user messages before the first reply."""
    turns: list[Turn] = field(default_factory=list)


def load_trajectory(logs: EvalLogs) -> Trajectory | None:
    """The trajectory from trajectory.json, else rebuilt from the gateway's exchange log."""
    if logs.trajectory is not None:
        try:
            data = json.loads(safefs.read_text_or_none(logs.trajectory, TRAJECTORY_LIMIT) or "")
        except ValueError:
            data = None
        if isinstance(data, dict):
            return _from_agent_record(data)
    if logs.llm is not None:
        return _from_exchange_log(logs.llm)
    return None


def read_text(path: Path | None, limit: int = 200_000) -> str | None:
    """A log file's text, cut to `limit` characters (logs can be huge)."""
    text = safefs.read_head(path, limit)
    if text is None:
        return None
    return text if len(text) <= limit else text[:limit] + "\n[... cut ...]\n"


def _from_agent_record(data: dict[str, Any]) -> Trajectory:
    traj = Trajectory(
        source=TRAJECTORY,
        task_id=data.get("task_id"),
        model=data.get("model"),
        exit_status=data.get("exit_status"),
        exit_message=data.get("exit_message") or "",
        duration_s=data.get("duration_s"),
        usage=data.get("usage") or {},
    )
    _add_messages(traj, data.get("messages") or [])
    steps = [s for s in data.get("steps") or [] if isinstance(s, dict)]
    for turn, step in zip(traj.turns, steps, strict=False):
        turn.step = step.get("step", turn.step)
        turn.llm_s = step.get("llm_s")
        turn.usage = step.get("usage") or {}
        meta = {c.get("id"): c for c in step.get("tool_calls") or [] if isinstance(c, dict)}
        for call in turn.tool_calls:
            if call.id in meta:
                call.ok = meta[call.id].get("ok")
                call.duration_s = meta[call.id].get("duration_s")
    return traj


def _from_exchange_log(path: Path) -> Trajectory:
    lines = []
    for raw in (safefs.read_text_or_none(path, LLM_LOG_LIMIT) or "").splitlines():
        try:
            lines.append(json.loads(raw))
        except ValueError:
            continue  # a torn last line
    traj = Trajectory(source=LLM_LOG)
    if not lines:
        return traj
    last = lines[-1]
    traj.task_id, traj.model = last.get("task_id"), last.get("model")
    traj.usage = {
        "llm_calls": len(lines),
        "prompt_tokens": sum((x.get("usage") or {}).get("input_tokens", 0) for x in lines),
        "completion_tokens": sum((x.get("usage") or {}).get("output_tokens", 0) for x in lines),
    }
    # The last request carries the whole conversation so far; its answer ends it.
    messages = list(((last.get("request") or {}).get("messages")) or [])
    choices = (last.get("response") or {}).get("choices") or []
    if choices:
        messages.append(choices[0].get("message") or {})
    if last.get("error"):
        traj.exit_status, traj.exit_message = "error", json.dumps(last["error"])[:500]
    _add_messages(traj, messages)
    for turn, line in zip(traj.turns, lines, strict=False):
        turn.llm_s = line.get("latency_s")
        usage = line.get("usage") or {}
        turn.usage = {
            "prompt_tokens": usage.get("input_tokens"),
            "completion_tokens": usage.get("output_tokens"),
        }
    return traj


def _add_messages(traj: Trajectory, messages: list[Any]) -> None:
    calls: dict[str, ToolCall] = {}
    for message in messages:
        if not isinstance(message, dict):
            continue
        role, content = message.get("role"), _text(message.get("content"))
        if role == "assistant":
            turn = Turn(step=len(traj.turns) + 1, content=content)
            for raw in message.get("tool_calls") or []:
                function = raw.get("function") or {}
                args = function.get("arguments")
                call = ToolCall(
                    id=str(raw.get("id") or ""),
                    name=str(function.get("name") or "?"),
                    arguments=args if isinstance(args, str) else json.dumps(args),
                )
                turn.tool_calls.append(call)
                calls[call.id] = call
            traj.turns.append(turn)
        elif role == "tool":
            call = calls.get(str(message.get("tool_call_id") or ""))
            if call is not None:
                call.output = content
        elif traj.turns:
            traj.turns[-1].notes.append(content)
        else:
            traj.prompt.append({"role": str(role), "content": content})


def _text(content: Any) -> str:
    """Message content as text (OpenAI allows a list of typed parts)."""
    if content is None:
        return ""
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)
