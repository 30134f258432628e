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


PATCHED = "/testbed/src/flask/app.py"


def _output(after: list[str], before: dict[str, str] = BEFORE, noise: str = "") -> str:
    """The setup exec's output (its before-block, the setup's own output) and the audit
    exec's, joined by a form feed."""
    hashes = [f"{h}  {p}" for p, h in before.items()]
    setup = [
        f"{M} before-begin 1764756000.123456789",
        *hashes,
        f"P {PATCHED}",
        f"{M} before-end",
        "+ python -m pip install -e .",
        "",
    ]
    listing = [noise, f"{M} after-begin", f"P {PATCHED}", *after,
               f"{M} after-end {len(after)} 0", ""]  # fmt: skip
    return "\n".join(setup) + "\f" + "\n".join(listing)


def _audit(output: str) -> setup_audit.Audit:
    setup, _, listing = output.partition("\f")
    return setup_audit.audit(setup, listing, set(), "pallets/flask")


def _evidence(output: str) -> str | None:
    return _audit(output).evidence


def test_a_legit_reinstall_is_no_evidence() -> None:
    audit = _audit(_output(REINSTALL))
    assert audit.evidence is None and len(audit.changed) == len(REINSTALL)
    # the package's own files, even new ones: the patch could have written them itself
    assert _evidence(_output(REINSTALL + [f"F {'6' * 64} /testbed/src/flask/extra.py"])) is None
    # a start-up file rewritten under another version's name (pytest-10051's image has
    # __editable__.pytest-0.1.dev1+g....pth, the reinstall writes the same as -7.2.pth)
    assert _evidence(_output(REINSTALL + [f"F {H2} {SITE}/__editable__.flask-9.pth"])) is None


@pytest.mark.parametrize(
    ("line", "found"),
    [(f"F {'7' * 64} {SITE}/rt8_boot.pth", "outside the repository"),  # round eight P
     (f"F {'8' * 64} {SITE}/rt8_boot.py", "outside the repository"),
     (f"F {'7' * 64} {SITE}/__editable__.flask-2.3.0.dev0.pth", "outside"),  # other content
     (f"F {H1} {SITE}/x.pth", "outside"),  # flask's script's content as a .pth
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
    # and a before-block printed by the setup's code cannot widen what was there before
    forged = f"{M} before-begin 1\n{'7' * 64}  {SITE}/rt8_boot.pth\n{M} before-end\n"
    setup, _, listing = _output(planted).partition("\f")
    widened = setup.replace("+ python -m pip install -e .", forged)
    assert setup_audit.audit(widened, listing, set(), "").evidence is not None


def test_a_file_of_the_patch_moved_or_rewritten_is_evidence() -> None:
    """A folder of the patch renamed into the env keeps its files' old ctimes: the file
    is gone from the repository, or (put back) listed as changed."""
    gone = _output(REINSTALL).replace(f"after-begin\nP {PATCHED}", "after-begin")
    assert "moved /testbed/src/flask/app.py" in str(_evidence(gone))
    back = _output(REINSTALL + [f"F {'6' * 64} {PATCHED}"])
    assert "rewrote /testbed/src/flask/app.py" in str(_evidence(back))
    patch = ("diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n"
             "@@ -1 +1 @@\n-x\n+y\n"
             "diff --git a/src/b.py b/src/b.py\ndeleted file mode 100644\n--- a/src/b.py\n"
             "+++ /dev/null\n@@ -1 +0,0 @@\n-x\n")  # fmt: skip
    assert setup_audit.patched_files(patch) == ["src/a.py"]
    script = setup_audit.setup_script("setup.sh", ["src/a b.py"])
    assert "[ -e '/testbed/src/a b.py' ] && echo 'P /testbed/src/a b.py'" in script


@pytest.mark.parametrize(
    "cut",
    [lambda out: out.rsplit(f"{M} after-end", 1)[0],  # the audit never finished
     lambda out: out.split(f"{M} before-end", 1)[1],  # no before-block
     lambda out: out.split("\f", 1)[0] + "\f",  # no audit exec
     lambda out: out.replace(f"after-end {len(REINSTALL)} 0", f"after-end {setup_audit.CAP + 1} 0"),
     lambda out: out.replace(f"after-end {len(REINSTALL)} 0", f"after-end {len(REINSTALL)} 1"),
     lambda out: ""],
    ids=["no-end", "no-before", "no-audit-exec", "truncated", "odd-name", "empty"],
)  # fmt: skip
def test_a_missing_or_cut_audit_is_evidence(cut: Callable[[str], str]) -> None:
    assert _evidence(cut(_output(REINSTALL))) is not None


def test_the_scripts_are_bash_and_run_only_the_images_tools() -> None:
    setup = setup_audit.setup_script("setup.sh", ["src/flask/app.py"])
    listing = setup_audit.audit_script("1764756000.123456789", ["src/flask/app.py"])
    assert "/bin/bash /stage/setup.sh\nkill -9 -1" in setup
    assert listing.startswith("cd / || exit 90\nkill -9 -1")
    for script in (setup, listing):
        subprocess.run(["bash", "-n"], input=script, text=True, check=True)
        tools = {w for ln in script.splitlines() for w in ln.split() if w.startswith("/usr/")}
        assert tools <= {"/usr/bin/date", "/usr/bin/find", "/usr/bin/sha256sum",
                         "/usr/bin/mktemp", "/usr/bin/head"}, tools  # fmt: skip
    assert setup_audit.start(f"x\n{M} before-begin 17.5\n{M} before-begin 18.5\n") == "17.5"
    with pytest.raises(ValueError):
        setup_audit.audit_script("1; rm -rf /", [])


def test_the_setup_step_no_longer_writes_the_home_gitconfig() -> None:
    script = "\n".join(["#!/bin/bash", "git config --global --add safe.directory /testbed",
                        "python -m pip install -e .", ": '>>>>> Start Test Output'",
                        "pytest -rA tests/test_x.py", ""])  # fmt: skip
    assert steps.setup_script(script) == "#!/bin/bash\npython -m pip install -e .\n"
