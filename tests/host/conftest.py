"""Host-side safety: a fake key planted in the dgm process's environment and on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

# Obviously fake, never a real key shape a secret scanner flags.
FAKE_KEY = "sk-ant-FAKE-host-canary-00"


@pytest.fixture
def planted_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The key in this process's environment (what /proc/self/environ shows) and in a
    host file outside any agent's tree; returns the file."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    secret = tmp_path / "host-secret.txt"
    secret.write_text(f"ANTHROPIC_API_KEY={FAKE_KEY}\n")
    return secret


def hostile_tree(root: Path, secret: Path) -> Path:
    """An agent codebase whose files point at the host's secrets."""
    import os

    root.mkdir(parents=True, exist_ok=True)
    (root / "agent.toml").write_text('[agent]\nname = "h"\n[commands]\nsolve = "true"\n')
    (root / "agent.py").write_text("print('hi')\n")
    (root / "notes.md").symlink_to("/proc/self/environ")
    (root / "key.txt").symlink_to(secret)
    (root / "docs").symlink_to(secret.parent)  # a folder link: docs/host-secret.txt
    os.mkfifo(root / "pipe.md")  # opening it for reading would hang the host
    (root / "sub").mkdir()
    (root / "sub" / "inner.py").write_text("X = 1\n")
    (root / "sub" / "ok.md").symlink_to("inner.py")  # inside the tree: still not followed
    return root


@pytest.fixture(scope="session")
def polyglot_image() -> str:
    from dgm.sandbox import images

    return images.build("polyglot", log=lambda line: None)


@pytest.fixture(scope="session")
def runtime_image() -> str:
    from dgm.sandbox import images

    return images.build("runtime", log=lambda line: None)
