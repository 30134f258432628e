"""Run one runtime tool's smoke check; executed INSIDE a sandbox by the harvest job.

    python3 -B tool_smoke.py TOOL_DIR

TOOL_DIR holds tool.json and tool.py (see seed_agent/coder/tools/runtime.py). The script
runs with smoke.args as JSON on stdin in a scratch folder holding smoke.files; exit 0 when
it exits 0 and its output contains smoke.expect. Standard library only: the sandbox
image has no dgm.
"""

import json
import os
import subprocess
import sys
import tempfile

TIMEOUT_S = 60
OUTPUT_LIMIT = 1_000_000


def main(tool_dir: str) -> int:
    with open(os.path.join(tool_dir, "tool.json"), encoding="utf-8") as f:
        smoke = json.load(f).get("smoke") or {}
    with tempfile.TemporaryDirectory(prefix="tool-smoke-") as scratch:
        for rel, text in (smoke.get("files") or {}).items():
            path = os.path.normpath(os.path.join(scratch, rel))
            if not path.startswith(scratch + os.sep):
                print(f"smoke file {rel!r} is outside the scratch folder")
                return 1
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(str(text))
        try:
            proc = subprocess.run(
                [sys.executable, "-B", os.path.join(tool_dir, "tool.py")],
                input=json.dumps(smoke.get("args") or {}).encode(),
                cwd=scratch,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            print(f"timed out after {TIMEOUT_S} s")
            return 1
    output = proc.stdout[:OUTPUT_LIMIT].decode("utf-8", "replace")
    expect = str(smoke.get("expect") or "")
    if proc.returncode != 0:
        print(f"exit code {proc.returncode}: {output[-1000:]}")
        return 1
    if expect not in output:
        print(f"the output does not contain {expect!r}: {output[-1000:]}")
        return 1
    print("smoke passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
