"""Put a third-party example agent's source beside its agent.toml (at test time, not in git).

    python examples/agents/fetch.py mini-swe-agent DEST   # the pinned PyPI release
    python examples/agents/fetch.py dgm-initial DEST      # DGM's initial agent from shared/

DEST receives the example folder (agent.toml, requirements.txt) plus the agent's code.
mini-swe-agent is fetched as its release wheel with `pip download --no-deps
--only-binary=:all:` (nothing of it runs on this machine) and unpacked; DGM's initial
agent is copied from ../shared/third-party-agents/dgm-initial (or DGM_INITIAL_SOURCE).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MINI_SWE_AGENT = "mini-swe-agent==2.4.6"
DGM_INITIAL = Path(
    os.environ.get(
        "DGM_INITIAL_SOURCE",
        HERE.parents[1].parent / "shared" / "third-party-agents" / "dgm-initial",  # ../shared
    )  # fmt: skip
)


def fetch(name: str, dest: Path) -> Path:
    example = HERE / name
    if not (example / "agent.toml").is_file():
        raise SystemExit(f"no example agent {name!r} in {HERE}")
    shutil.copytree(example, dest, dirs_exist_ok=True)
    if name == "mini-swe-agent":
        with tempfile.TemporaryDirectory() as tmp:
            pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet"]
            subprocess.run([*pip, "--only-binary=:all:", "--dest", tmp, MINI_SWE_AGENT], check=True)
            wheel = next(Path(tmp).glob("*.whl"))
            with zipfile.ZipFile(wheel) as archive:
                members = [m for m in archive.namelist() if m.startswith("minisweagent/")]
                archive.extractall(dest, members)
    elif name == "dgm-initial":
        if not DGM_INITIAL.is_dir():
            raise SystemExit(f"DGM's initial agent is not at {DGM_INITIAL}; set DGM_INITIAL_SOURCE")
        shutil.copytree(DGM_INITIAL, dest, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".git", "__pycache__"))  # fmt: skip
        shutil.copy(example / "requirements.txt", dest / "requirements.txt")  # ours, pinned
        set_model(dest / "llm_withtools.py")
    return dest


BEDROCK_MODEL = "CLAUDE_MODEL = 'bedrock/us.anthropic.claude-3-5-sonnet-20241022-v2:0'"
USER_MODEL = "CLAUDE_MODEL = 'claude-3-5-sonnet-20241022'"


def set_model(source: Path) -> None:
    """What a user of DGM's agent must set: a model its plain Anthropic client serves."""
    text = source.read_text()
    if BEDROCK_MODEL not in text:
        raise SystemExit(f"{source} does not set {BEDROCK_MODEL!r}: has DGM's agent changed?")
    source.write_text(text.replace(BEDROCK_MODEL, USER_MODEL))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    print(fetch(sys.argv[1], Path(sys.argv[2])))
