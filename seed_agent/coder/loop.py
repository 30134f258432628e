"""The agent loop: ask the model, run the tools it calls, repeat until it finishes.

Every way a run can end has a name, recorded as the trajectory's exit_status:
finished, step_limit, time_limit, budget_exceeded, context_exceeded, gateway_error,
interrupted.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Dict, List

from . import tools
from .context import ContextWindow
from .llm import LLMClient, LLMError
from .tools import runtime
from .tools.base import ToolContext
from .trajectory import Trajectory

AGENT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROMPTS_DIR = os.path.join(AGENT_DIR, "prompts")
KEPT_TOOLS_DIR = os.path.join(AGENT_DIR, "tools")  # agent.toml [tools] dir


class Interrupted(BaseException):
    """Raised by the SIGTERM handler so the run ends with a saved trajectory.

    A BaseException, so that the tools' catch-all error handling lets it through."""


def render(name: str, **values: object) -> str:
    """A prompt from prompts/<name>.txt with {placeholders} filled (other braces untouched)."""
    with open(os.path.join(PROMPTS_DIR, name + ".txt"), encoding="utf-8") as f:
        text = f.read()
    for key, value in values.items():
        text = text.replace("{" + key + "}", str(value))
    return text


class Agent:
    def __init__(self, llm: LLMClient, task: Dict, workdir: str, trajectory: Trajectory) -> None:
        self.llm, self.task, self.trajectory = llm, task, trajectory
        self.max_steps = int(task.get("max_steps") or 50)
        time_limit_s = float(task.get("time_limit_s") or 3600)
        self.deadline = time.monotonic() + time_limit_s
        self.ctx = ToolContext(workdir, self.deadline)
        self._setup_runtime_tools(os.path.dirname(trajectory.path))
        self.context = ContextWindow.configured(task, os.environ)
        facts = {"max_steps": self.max_steps, "time_limit_s": int(time_limit_s)}
        facts["workdir"] = self.ctx.workdir
        self.messages: List[Dict] = [
            {"role": "system", "content": render("system")},
            {"role": "user", "content": render("task", **{**task, **facts})},
        ]
        trajectory.set_messages(self.messages)

    def _setup_runtime_tools(self, out_dir: str) -> None:
        """Kept tools are offered from the first step; new ones are saved under out_dir."""
        ctx = self.ctx
        ctx.tools_dir = os.path.join(out_dir, "tools")
        ctx.builtin_names = list(tools.by_name())
        kept = [t for t in runtime.load_kept(KEPT_TOOLS_DIR) if t.name not in ctx.builtin_names]
        ctx.runtime_tools.update({tool.name: tool for tool in kept})
        ctx.kept_names = [tool.name for tool in kept]
        record = {"kept": list(ctx.kept_names), "made": []}
        self.trajectory.data["runtime_tools"] = record

        def made(name: str) -> None:
            entry = {"name": name, "step": len(self.trajectory.data["steps"])}
            entry["saved_to"] = os.path.join("tools", name)  # relative to the output dir
            record["made"].append(entry)

        ctx.on_tool_made = made

    def run(self) -> str:
        """Run to the end; returns (and records) the exit status."""
        self.trajectory.save()  # a record exists even if the first model call never returns
        try:
            status, message = self._loop()
        except Interrupted:
            status, message = "interrupted", "the agent was asked to stop (SIGTERM)"
        self.trajectory.data["context"] = self.context.summary()
        self.trajectory.finish(status, message)
        return status

    def _loop(self):
        for step in range(1, self.max_steps + 1):
            if self.ctx.seconds_left() <= 0:
                return "time_limit", f"time limit reached after {step - 1} steps"
            started = time.monotonic()
            try:
                response = self._ask()
            except LLMError as exc:
                return exc.status, str(exc)
            llm_s = time.monotonic() - started
            record = self.trajectory.add_step(step, llm_s, response.get("usage"))
            message = response["choices"][0]["message"]
            calls = _normalise_calls(message.get("tool_calls"), step)
            reply = {"role": "assistant", "content": message.get("content")}
            self.messages.append(dict(reply, tool_calls=calls) if calls else reply)
            if not calls:  # the model answered in prose: remind it how to act
                nudge = render("no_tool_call", tool_names=", ".join(tools.by_name(self.ctx)))
                self.messages.append({"role": "user", "content": nudge})
                _log(step, "(no tool call)")
            for call in calls:
                summary = self._run_tool(call, record)
                if summary is not None:
                    return "finished", summary
            self.trajectory.save()
        return "step_limit", f"reached the limit of {self.max_steps} steps"

    def _ask(self) -> Dict:
        """One model call with the conversation fitted to the context window; if the
        provider still finds it too long, trim harder and try once more."""
        schemas = tools.schemas(self.ctx)  # runtime tools made last step are offered now
        sent = self.context.fit(self.messages, schemas)
        try:
            return self.llm.chat(sent, schemas, self.deadline)
        except LLMError as exc:
            if exc.status != "context_exceeded":
                raise
            self.context.shrink(sent, schemas)
        sent = self.context.fit(self.messages, schemas)
        try:
            return self.llm.chat(sent, schemas, self.deadline)
        except LLMError as exc:
            if exc.status == "context_exceeded":
                raise LLMError(
                    "context_exceeded",
                    f"the conversation does not fit the model's context window even with "
                    f"{len(self.context.elided)} old messages elided (the latest turns and the "
                    f"task are kept whole): {exc}",
                ) from None
            raise

    def _run_tool(self, call: Dict, record: Dict):
        """Run one call, append its result; returns the summary if it was `finish`."""
        name, arguments = call["function"]["name"], call["function"]["arguments"]
        _log(len(self.trajectory.data["steps"]), f"{name} {arguments[:120]}")
        started = time.monotonic()
        result = tools.call(name, arguments, self.ctx)
        duration_s = round(time.monotonic() - started, 3)
        record["tool_calls"].append(
            {"id": call["id"], "name": name, "ok": result.ok, "duration_s": duration_s}
        )
        self.messages.append({"role": "tool", "tool_call_id": call["id"], "content": result.output})
        return result.finish_summary


def _normalise_calls(raw_calls, step: int) -> List[Dict]:
    """Tool calls in the canonical shape, whatever small liberties the backend took."""
    calls = []
    for i, raw in enumerate(raw_calls or []):
        function = raw.get("function") if isinstance(raw, dict) else None
        function = function if isinstance(function, dict) else {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):  # some servers send an object, not a JSON string
            arguments = json.dumps(arguments) if arguments is not None else ""
        call_id = raw.get("id") if isinstance(raw, dict) else None
        calls.append(
            {
                "id": call_id or f"call_{step}_{i}",
                "type": "function",
                "function": {"name": str(function.get("name") or ""), "arguments": arguments},
            }
        )
    return calls


def _log(step: int, text: str) -> None:
    print(f"[agent] step {step}: {text}", file=sys.stderr, flush=True)
