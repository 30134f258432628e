"""Runtime tools: tools the agent writes for itself while it works, and the kept ones.

A runtime tool is a folder `<name>/` holding `tool.json` ({"name", "description",
"parameters" (JSON schema), "smoke": {"args", "expect", "files"}}) and `tool.py` (a
script: JSON arguments on stdin, the result on stdout, exit 0). The `make_tool` tool
saves new ones to `<output dir>/tools/<name>/` (the harness keeps them); tools kept in
the agent's own codebase (`tools/<name>/`, agent.toml `[tools] dir`) are loaded at start.
Each call is `python3 -B tool.py` in the workdir, in its own process group, with a
timeout and a capped output, like `bash`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional

from .base import OUTPUT_LIMIT_CHARS, ToolContext, ToolError
from .bash import _BoundedReader, _kill_group

NAME = re.compile(r"^[a-z][a-z0-9_]{1,39}$")
TIMEOUT_S = 60
SOURCE_LIMIT = 64 * 1024
SPEC_LIMIT = 16 * 1024


class RuntimeTool:
    """One runtime tool: its schema for the model and the folder its script is in."""

    def __init__(self, folder: str, meta: Dict) -> None:
        self.folder = folder
        self.meta = meta
        self.name = meta["name"]
        self.SPEC = {
            "name": self.name,
            "description": str(meta.get("description") or ""),
            "parameters": meta["parameters"],
        }

    def run(self, args: Dict, ctx: ToolContext) -> str:
        code, output = run_script(os.path.join(self.folder, "tool.py"), args, ctx.workdir, ctx)
        if code != 0:
            raise ToolError(f"tool {self.name} failed ({code}): {output}")
        return output or "(no output)"


def check_meta(meta: object) -> Dict:
    """The tool.json content, checked; raises ToolError saying what is wrong."""
    if not isinstance(meta, dict):
        raise ToolError("tool.json must hold a JSON object")
    name = meta.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise ToolError(
            f"bad tool name {name!r}: use 2-40 lowercase letters, digits or _, starting "
            "with a letter"
        )
    params = meta.get("parameters")
    if not isinstance(params, dict) or params.get("type") != "object":
        raise ToolError('parameters must be a JSON schema object ({"type": "object", ...})')
    if not isinstance(params.get("properties", {}), dict):
        raise ToolError("parameters.properties must be an object")
    smoke = meta.get("smoke")
    if not isinstance(smoke, dict) or not isinstance(smoke.get("args", {}), dict):
        raise ToolError('smoke must be {"args": {...}, "expect": "text the output contains"}')
    if not isinstance(smoke.get("expect", ""), str):
        raise ToolError("smoke.expect must be a string")
    files = smoke.get("files", {})
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise ToolError("smoke.files must map relative paths to file contents")
    return meta


def load_folder(folder: str) -> Optional[RuntimeTool]:
    """The tool saved in `folder`, or None when it is not a readable, valid tool."""
    try:
        with open(os.path.join(folder, "tool.json"), encoding="utf-8") as f:
            meta = check_meta(json.loads(f.read(SPEC_LIMIT + 1)))
    except (OSError, ValueError, ToolError):
        return None
    if meta["name"] != os.path.basename(folder.rstrip("/")):
        return None
    if not os.path.isfile(os.path.join(folder, "tool.py")):
        return None
    return RuntimeTool(folder, meta)


def load_kept(tools_dir: str) -> List[RuntimeTool]:
    """The tools kept in the agent's codebase, by name."""
    if not os.path.isdir(tools_dir):
        return []
    found = [load_folder(os.path.join(tools_dir, n)) for n in sorted(os.listdir(tools_dir))]
    return [tool for tool in found if tool is not None]


def smoke(folder: str, meta: Dict, ctx: ToolContext) -> Optional[str]:
    """Run the tool's smoke check in a scratch folder with its files; None when it
    passes, else why not."""
    spec = meta["smoke"]
    with tempfile.TemporaryDirectory(prefix="tool-smoke-") as scratch:
        for rel, text in (spec.get("files") or {}).items():
            path = os.path.normpath(os.path.join(scratch, rel))
            if not path.startswith(scratch + os.sep):
                return f"smoke file {rel!r} is outside the scratch folder"
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        code, output = run_script(
            os.path.join(folder, "tool.py"), spec.get("args") or {}, scratch, ctx
        )
    expect = spec.get("expect") or ""
    if code != 0:
        return f"exit code {code}: {output}"
    if expect not in output:
        return f"the output does not contain {expect!r}: {output}"
    return None


def run_script(script: str, args: Dict, cwd: str, ctx: ToolContext):
    """(exit code or 'timed out', output) of `python3 -B script` with `args` on stdin."""
    timeout = max(1, min(TIMEOUT_S, ctx.seconds_left()))
    proc = subprocess.Popen(
        [sys.executable, "-B", script],
        cwd=cwd,
        env=ctx.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    reader = _BoundedReader(proc.stdout, OUTPUT_LIMIT_CHARS)
    reader.start()
    try:
        try:
            proc.stdin.write(json.dumps(args).encode("utf-8"))
            proc.stdin.close()
        except (BrokenPipeError, OSError):  # the script did not read its arguments
            pass
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        proc.wait()
        code = f"timed out after {timeout:.0f} s"
    except BaseException:
        _kill_group(proc.pid)
        raise
    reader.join(timeout=5)
    proc.stdout.close()
    return code, reader.text().rstrip()
