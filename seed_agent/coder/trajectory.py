"""The run record: messages, per-step timings and usage, and how the run ended.

Saved to <output dir>/trajectory.json after every step (atomically), so even a run
killed from outside leaves a readable record of what it did.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Dict, List, Optional

FORMAT = "dgm-trajectory/1"


class Trajectory:
    def __init__(self, out_dir: str, task: Dict[str, Any], model: str) -> None:
        self.path = os.path.join(out_dir, "trajectory.json")
        self.started = time.time()
        self.data: Dict[str, Any] = {
            "format": FORMAT,
            "task_id": task.get("id"),
            "model": model,
            "exit_status": None,  # None while the run is going on
            "exit_message": "",
            "started_at": _iso(self.started),
            "ended_at": None,
            "duration_s": None,
            "usage": {
                "llm_calls": 0,
                "prompt_tokens": 0,
                "cached_tokens": 0,  # of the prompt tokens, those read from a prompt cache
                "completion_tokens": 0,
            },
            "steps": [],
            "messages": [],
        }

    def set_messages(self, messages: List[Dict]) -> None:
        self.data["messages"] = messages  # the live list: saved as it grows

    def add_step(self, step: int, llm_s: float, usage: Optional[Dict]) -> Dict:
        """Record one model call; the returned dict collects that step's tool calls."""
        record = {"step": step, "llm_s": round(llm_s, 3), "usage": usage, "tool_calls": []}
        self.data["steps"].append(record)
        totals = self.data["usage"]
        totals["llm_calls"] += 1
        usage = usage if isinstance(usage, dict) else {}
        for key in ("prompt_tokens", "completion_tokens"):
            totals[key] += int(usage.get(key) or 0)
        details = usage.get("prompt_tokens_details")
        if isinstance(details, dict):
            totals["cached_tokens"] += int(details.get("cached_tokens") or 0)
        return record

    def finish(self, status: str, message: str = "") -> None:
        ended = time.time()
        self.data.update(
            exit_status=status,
            exit_message=message,
            ended_at=_iso(ended),
            duration_s=round(ended - self.started, 3),
        )
        self.save()

    def save(self) -> None:
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.data, f, indent=1)
        os.replace(tmp, self.path)


def _iso(timestamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))
