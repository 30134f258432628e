"""Usage errors through the real entry point: one line with the fix, exit code 2.

Each case runs in a fresh process twice: through the installed `dgm` console script,
and with `click` made unimportable, as in the base install (typer >= 0.2x vendors click
as `typer._click`, and nothing else of dgm's dependencies brings the package).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import dgm

SCRIPT = Path(sys.executable).parent / "dgm"
WITHOUT_CLICK = (
    "import sys; sys.modules['click'] = None; sys.argv[0] = 'dgm'\n"
    "from dgm.commands.app import main; main()"
)


def _vendored_click() -> bool:
    try:
        import typer._click  # noqa: F401
    except ImportError:
        return False
    return True


def dgm_cli(args: list[str], base_install: bool, **env: str) -> subprocess.CompletedProcess:
    if base_install:
        if not _vendored_click():
            pytest.skip("this typer uses the click package: there is no click-free install")
        command = [sys.executable, "-c", WITHOUT_CLICK, *args]
    else:
        command = [str(SCRIPT), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env}, cwd="/")  # fmt: skip


BOTH = pytest.mark.parametrize("base_install", [False, True], ids=["script", "no-click"])


@BOTH
@pytest.mark.parametrize(
    ("args", "problem", "fix"),
    [
        (["run", "--bogus"], "No such option: --bogus", "see `dgm run --help`"),
        (["run", "--workers", "many"], "Invalid value for '--workers'", "`dgm run --help`"),
        (["run", "--price", "3"], "Invalid value for '--price'", "`dgm run --help`"),
        (
            ["run", "--self-improve", "hyper"],
            "Invalid value for '--self-improve'",
            "`dgm run --help`",
        ),
        (["resume", "x", "--self-improve", "own"], "'own' is not a mode", "`dgm resume --help`"),
        (["resume"], "Missing argument", "see `dgm resume --help`"),
        (["frobnicate"], "No such command 'frobnicate'", "see `dgm --help` for the commands"),
        (["rnu"], "No such command 'rnu'", "dgm --help"),
        (["sandbox", "bild"], "No such command 'bild'", "dgm sandbox --help"),
    ],
)
def test_usage_error_is_one_line_with_the_fix_and_exit_2(args, problem, fix, base_install):
    result = dgm_cli(args, base_install)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and problem in lines[0]
    assert f"(fix: {fix}" in lines[0] or fix in lines[0].split("(fix:")[1]
    assert "Traceback" not in result.stderr


@BOTH
def test_version(base_install) -> None:
    result = dgm_cli(["--version"], base_install)
    assert (result.returncode, result.stdout) == (0, f"dgm {dgm.__version__}\n")


def test_shell_completion_script_and_answers() -> None:
    script = dgm_cli(["--show-completion", "bash"], base_install=False)
    assert script.returncode == 0 and "_DGM_COMPLETE=complete_bash" in script.stdout
    answer = dgm_cli([], False, _DGM_COMPLETE="complete_bash", COMP_WORDS="dgm sandbox bu",
                     COMP_CWORD="2")  # fmt: skip
    assert answer.returncode == 0 and answer.stdout.split() == ["build"]
