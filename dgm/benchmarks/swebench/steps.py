"""The SWE-bench judge's container steps, each a script of its own (one `docker exec` each).

1. prepare: apply the model patch; hand the host the base commit's test files and the
   image's pytest plugins. No code of the patch runs.
2. place: check the test files out at the base commit, apply the official test patch
   and write the judge's rewritten test files. Still no code of the patch has run, so
   every binary it uses is the image's. The host then deletes the staged test patch,
   rewritten files and this script from the bind mount: nothing that holds the official
   test bodies or the judge's plan exists in the container after this step.
3. setup: the eval script's lines before its test command (the package's reinstall),
   without the test patch's heredoc and without the lines that would check the test
   files out again. Code of the patch may run here (a build backend); every process
   left is killed afterwards.
4. tests: a script holding only the environment and the test command (what bash keeps
   open on fd 255 while the tests run), then every process left is killed.
"""

from __future__ import annotations

import re
import shlex

from dgm.benchmarks.swebench import guard as swe_guard
from dgm.benchmarks.swebench import stream
from dgm.errors import DgmError

REPO_DIR = "/testbed"
APPLY_FAILED = ">>>>> Patch Apply Failed"
TEST_PATCH_FAILED = ">>>>> Test Patch Apply Failed"
PREP_DIR = "/tmp/dgm-prep"
SECRET_DIR = "secret"  # under the stage; deleted on the host after the place step
_APPLY = (
    "git apply --verbose {p} || git apply --verbose --3way {p} || git apply --verbose --reject {p}"
    " || patch --batch --forward --fuzz=5 -p1 -i {p}"
)
_PLUGINS = (
    "import importlib.metadata as m\n"
    "for d in m.distributions():\n"
    "    for e in d.entry_points:\n"
    "        if e.group == 'pytest11': print(e.value.split(':')[0].strip())\n"
)
_HEREDOC = re.compile(r"^.*<<\s*'?(EOF_\w+)'?\s*$")
# the eval script's informational git lines: after the place step they would print the
# judge's rewritten test files into the log
_GIT_INFO = re.compile(r"^git (status|show|-c core\.fileMode=false diff)\b")
_ENVIRONMENT = re.compile(r"^(source |conda activate |cd |export |set -)")


def prepare_script(patch: str, base_commit: str, files: list[str]) -> str:
    """Before any code of the patch can run: apply it, and hand the host the test files
    at the base commit and the pytest plugins the image installed."""
    apply = _APPLY.format(p="/stage/patch.diff")
    lines = [f"cd {REPO_DIR} || exit 90"]
    if patch:
        lines.append(f"{{ {apply}; }} || {{ echo '{APPLY_FAILED}'; exit 1; }}")
    lines += ["echo '>>>>> Applied Patch'", f"mkdir -p {PREP_DIR}/files"]
    for i, path in enumerate(files):
        lines.append(
            f"git -c safe.directory='*' show {base_commit}:{shlex.quote(path)}"
            f" > {PREP_DIR}/files/{i}.py 2>/dev/null || rm -f {PREP_DIR}/files/{i}.py"
        )
    lines.append(
        f"( source /opt/miniconda3/bin/activate && conda activate testbed && python -I"
        f" -c {shlex.quote(_PLUGINS)} ) > {PREP_DIR}/plugins.txt 2>/dev/null"
    )
    return "\n".join(lines + ["exit 0"]) + "\n"


def split_eval_script(eval_script: str) -> tuple[list[str], str]:
    """(the lines before the test command, the test command)."""
    head, found, _ = eval_script.partition(swe_guard.START_MARK + "\n")
    if not found:
        raise DgmError("the instance's eval_script has no start-of-test-output marker")
    return head.splitlines(), swe_guard.test_command(eval_script)


def place_script(eval_script: str, base_commit: str, copied: list[str],
                 appended: list[str]) -> str:  # fmt: skip
    """The test files at the base commit, the official test patch (staged as a file, not a
    heredoc), then the judge's rewritten files (`copied`, staged as tests/<i>.py) or its
    fallback canaries appended to `appended`."""
    secret = f"/stage/{SECRET_DIR}"
    head, command = split_eval_script(eval_script)
    files = swe_guard.test_files(command)
    git = "git -c safe.directory='*'"
    lines = [f"cd {REPO_DIR} || exit 90", f"rm -rf {PREP_DIR}"]  # the host has read it
    # the script's own resets of the files its test patch touches, else the test files
    resets = [git + line[3:] for line in head if line.startswith("git checkout ")]
    if not resets and files:
        resets = [f"{git} checkout {base_commit} -- {' '.join(map(shlex.quote, files))}"]
    lines += resets
    lines.append(f"{git} apply -v {secret}/test.patch || {{ echo '{TEST_PATCH_FAILED}'; exit 1; }}")
    for i, path in enumerate(copied):
        lines.append(f"/bin/cp {secret}/tests/{i}.py {shlex.quote(REPO_DIR + '/' + path)}")
    for path in appended:
        lines.append(f"cat {secret}/canary.py >> {shlex.quote(REPO_DIR + '/' + path)}")
    return "\n".join(lines + ["exit 0"]) + "\n"


def setup_script(eval_script: str) -> str:
    """The eval script before its test command, less the test patch and the test files'
    checkout (the place step did both) and the git lines that would print them."""
    head, _ = split_eval_script(eval_script)
    out: list[str] = []
    ending = None
    for line in head:
        if ending is not None:
            ending = None if line.strip() == ending else ending
            continue
        match = _HEREDOC.match(line)
        if match:
            ending = match.group(1)
            continue
        if _GIT_INFO.match(line):
            continue
        if line.startswith("git checkout "):  # the place step did it
            continue
        # writes $HOME/.gitconfig (the setup audit's evidence); the place step's git
        # commands pass safe.directory themselves and no later step runs git
        if line.startswith("git config "):
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def tests_script(eval_script: str, report_dir: str, pytest: bool,
                 plugins: list[str] | None = None, nonce: str | None = None) -> str:  # fmt: skip
    """Only the environment and the test command, with the judge's report options and
    (with a nonce) its result stream plugin, loaded before anything else pytest loads;
    the plugin compiles the command's test files then (DGM_JUDGED)."""
    head, command = split_eval_script(eval_script)
    lines = ["#!/bin/bash"] + [ln for ln in head if _ENVIRONMENT.match(ln)]
    lines.append(f"mkdir -p {report_dir}")
    if pytest:
        options = [f"-p {stream.module(nonce)}"] if nonce else []
        options += [f"--junitxml={report_dir}/report.xml", "-o", "junit_family=xunit1"]
        options += [f"-p {p}" for p in plugins or []]
        if plugins:  # (for the stream plugin's pytest_addhooks)
            lines.append(f"export DGM_PLUGINS={shlex.quote(' '.join(plugins))}")
        if nonce:
            judged = ":".join(swe_guard.test_files(command))
            lines.append(f"export DGM_STREAM={shlex.quote(nonce)}")
            lines.append(f"export DGM_JUDGED={shlex.quote(judged)}")
            lines.append(f"export PYTHONPATH=/stage/{stream.DIR}${{PYTHONPATH:+:$PYTHONPATH}}")
        lines.append("export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1")
        lines.append(f"export PYTEST_ADDOPTS={shlex.quote(' '.join(options))}")
    lines += [swe_guard.START_MARK, command, ": '>>>>> End Test Output'"]
    return "\n".join(lines) + "\n"


def wrapped(script: str) -> str:
    """Runs a staged script, then kills every process it left (the container's pid 1
    and this shell excepted)."""
    return f"cd {REPO_DIR} || exit 90\n/bin/bash /stage/{script}\nkill -9 -1 2>/dev/null\nexit 0\n"
