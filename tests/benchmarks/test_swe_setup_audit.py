"""The setup step's audit read as hostile input (no Docker): the wrapper's blocks as a
legit reinstall leaves them (flask-4992's, measured in Docker), and as a patch that
planted start-up code, changed a test file or printed a block of its own leaves them."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest

from dgm.benchmarks.swebench import setup_audit, steps

SITE = "/opt/miniconda3/envs/testbed/lib/python3.11/site-packages"
BIN = "/opt/miniconda3/envs/testbed/bin"
DIST = f"{SITE}/flask-2.3.0.dev0.dist-info"
H1, H2, H3, H4 = ("1" * 64, "2" * 64, "3" * 64, "4" * 64)
BEFORE = {f"{BIN}/flask": H1, f"{SITE}/__editable__.flask-2.3.0.dev0.pth": H2,
          f"{DIST}/entry_points.txt": H3, f"{SITE}/distutils-precedence.pth": H4}  # fmt: skip
# what pip's `install -e .` rewrote (same content) or wrote (the new dist-info's metadata)
REINSTALL = [f"F {h} {p}" for p, h in BEFORE.items() if "distutils" not in p] + [
    f"F {'5' * 64} {DIST}/{name}" for name in ("METADATA", "RECORD", "WHEEL", "INSTALLER",
                                             "direct_url.json", "licenses/LICENSE.rst")
]  # fmt: skip
M = setup_audit.MARK


def _output(after: list[str], before: dict[str, str] = BEFORE, noise: str = "") -> str:
    """The wrapper's output: the before-block, the setup's own output, the after-block."""
    hashes = [f"{h}  {p}" for p, h in before.items()]
    return "\n".join([f"{M} before-begin", *hashes, f"{M} before-end",
                      "+ python -m pip install -e .", noise, f"{M} after-begin", *after,
                      f"{M} after-end {len(after)} 0", ""])  # fmt: skip


def _evidence(output: str) -> str | None:
    return setup_audit.audit(output, set(), "pallets/flask").evidence


def test_a_legit_reinstall_is_no_evidence() -> None:
    audit = setup_audit.audit(_output(REINSTALL), set(), "pallets/flask")
    assert audit.evidence is None and len(audit.changed) == len(REINSTALL)
    # the package's own files, even new ones: the patch could have written them itself
    assert _evidence(_output(REINSTALL + [f"F {'6' * 64} /testbed/src/flask/extra.py"])) is None


@pytest.mark.parametrize(
    ("line", "found"),
    [(f"F {'7' * 64} {SITE}/rt8_boot.pth", "outside the repository"),  # round eight P
     (f"F {'8' * 64} {SITE}/rt8_boot.py", "outside the repository"),
     (f"F {'7' * 64} {SITE}/__editable__.flask-2.3.0.dev0.pth", "outside"),  # other content
     (f"F {H4} {SITE}/__editable__.flask-2.3.0.dev0.pth", "outside"),  # another file's
     (f"F {H1} {BIN}/pytest", "outside"),  # flask's script as pytest
     (f"F {'9' * 64} {DIST}/entry_points.txt", "outside"),  # a new pytest11 plugin
     (f"F {'9' * 64} /home/agent/.local/lib/python3.11/site-packages/x.pth", "outside"),
     (f"L {SITE}/x.dist-info", "outside"),
     (f"F {'9' * 64} /testbed/tests/test_basic.py", "a test file"),
     (f"F {'9' * 64} /testbed/tests/__pycache__/test_basic.cpython-311-pytest-7.pyc",
      "start-up hook (__pycache__)"),
     (f"F {'9' * 64} /testbed/conftest.py", "runner configuration"),
     (f"F {'9' * 64} /testbed/src/sitecustomize.py", "start-up hook"),
     (f"F {'9' * 64} /testbed/src/pytest.py", "runner configuration"),
     (f"U {SITE}/hidden.py", "unreadable"),
     (f"O {SITE}/fifo", "special file"),
     ("E /usr/bin/find: '/home/agent/x': Permission denied", "cannot read"),
     ("a line of the patch's own", "garbled")],
)  # fmt: skip
def test_what_the_setup_planted_is_evidence(line: str, found: str) -> None:
    evidence = _evidence(_output(REINSTALL + [line]))
    assert evidence is not None and found in evidence, evidence


def test_only_the_last_after_block_counts() -> None:
    """Code of the patch can print a clean block of its own before the wrapper's."""
    fake = "\n".join([f"{M} after-begin", *REINSTALL, f"{M} after-end {len(REINSTALL)} 0"])
    planted = REINSTALL + [f"F {'7' * 64} {SITE}/rt8_boot.pth"]
    evidence = _evidence(_output(planted, noise=fake))
    assert evidence is not None and "rt8_boot.pth" in evidence
    # and a block printed after the real before-block cannot widen what was there before
    forged_before = f"{M} before-begin\n{'7' * 64}  {SITE}/rt8_boot.pth\n{M} before-end"
    assert _evidence(_output(planted, noise=forged_before)) is not None


@pytest.mark.parametrize(
    "cut",
    [lambda out: out.rsplit(f"{M} after-end", 1)[0],  # the wrapper never finished
     lambda out: out.split(f"{M} before-end", 1)[1],  # no before-block
     lambda out: out.replace(f"after-end {len(REINSTALL)} 0", f"after-end {setup_audit.CAP + 1} 0"),
     lambda out: out.replace(f"after-end {len(REINSTALL)} 0", f"after-end {len(REINSTALL)} 1"),
     lambda out: ""],
    ids=["no-end", "no-before", "truncated", "odd-name", "empty"],
)  # fmt: skip
def test_a_missing_or_cut_audit_is_evidence(cut: Callable[[str], str]) -> None:
    assert _evidence(cut(_output(REINSTALL))) is not None


def test_the_wrapper_is_bash_and_runs_only_the_images_tools() -> None:
    script = setup_audit.script("setup.sh")
    subprocess.run(["bash", "-n"], input=script, text=True, check=True)
    assert "/bin/bash /stage/setup.sh\nkill -9 -1" in script
    tools = {w for line in script.splitlines() for w in line.split() if w.startswith("/usr/")}
    assert tools <= {"/usr/bin/date", "/usr/bin/find", "/usr/bin/sha256sum", "/usr/bin/mktemp",
                     "/usr/bin/head"}, tools  # fmt: skip


def test_the_setup_step_no_longer_writes_the_home_gitconfig() -> None:
    script = "\n".join(["#!/bin/bash", "git config --global --add safe.directory /testbed",
                        "python -m pip install -e .", ": '>>>>> Start Test Output'",
                        "pytest -rA tests/test_x.py", ""])  # fmt: skip
    assert steps.setup_script(script) == "#!/bin/bash\npython -m pip install -e .\n"
