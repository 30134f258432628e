"""What a SWE-bench model patch may not touch, and the canaries that catch what it does.

The judge runs the project's own tests in the project's own process, so anything that
decides how tests are found, run or reported belongs to the judge, not to the patch:
test files and folders, conftest files, runner configuration, packaging (entry points
install pytest plugins on the eval script's reinstall), interpreter start-up hooks,
modules that shadow the test framework, and the runner script the eval command names.
Hunks on those paths are dropped (and the drop recorded) before the patch is applied.
The rule goes by channel, not by file name: a start-up or runner name as any component of
the path (`sitecustomize/__init__.py`, `x/conftest/...`), anything under packaging metadata
(`*.dist-info/`, `*.egg-info/`, `entry_points.txt`, `.pth`, `.egg-link`) or compiled code.
The judge also turns pytest's entry-point plugin loading off (swe_judge).
"""

from __future__ import annotations

import ast
import re
import secrets
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

TEST_DIRS = {"test", "tests", "testing", "__tests__"}
CONFIG_FILES = {
    "conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml",
    "setup.py", "noxfile.py", "sitecustomize.py", "usercustomize.py", "pytest.py", "py.py",
    "manage.py", "runtests.py", ".coveragerc", "MANIFEST.in",
}  # fmt: skip
# Names that hook the interpreter or the runner whatever folder they sit in (a package
# `sitecustomize/__init__.py` is imported at start-up like the module).
HOOK_NAMES = {"sitecustomize", "usercustomize", "conftest", "entry_points.txt", "EGG-INFO",
              "__pycache__"}  # fmt: skip
# Packaging metadata: where entry points (pytest11 plugins) and start-up files come from.
METADATA_SUFFIXES = (".dist-info", ".egg-info", ".egg-link", ".egg", ".pth", ".pyc")
SHADOWING_DIRS = {"_pytest", "pytest", "pluggy", "unittest", "doctest", "py"}
_OWNERS = {"pytest-dev/pytest": {"_pytest", "pytest", "py"}, "pytest-dev/pluggy": {"pluggy"}}
_DIFF_HEADER = re.compile(r"^diff --git a/(.+?) b/(.+)$")
START_MARK = ": '>>>>> Start Test Output'"


def protected_reason(path: str, runner_files: set[str], repo: str = "") -> str | None:
    """Why the judge owns `path` (repository-relative), or None when a patch may edit it."""
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else path
    if path in runner_files:
        return "the test command's runner"
    if any(p == ".git" or p.startswith(".git/") for p in parts) or ".." in parts:
        return "git metadata or outside the repository"
    for part in parts:
        if part in CONFIG_FILES or part in HOOK_NAMES or part.removesuffix(".py") in HOOK_NAMES:
            return f"runner configuration or start-up hook ({part})"
        if part.endswith(METADATA_SUFFIXES):
            return f"packaging metadata or start-up file ({part})"
    if re.match(r"(test_.*|.*_test|tests?)\.py$", name):
        return "a test file"
    if any(p in TEST_DIRS for p in parts[:-1]):
        return "under a test folder"
    # a module that shadows the framework where the editable install puts the repository
    # (its root, or src/) on sys.path; the framework's own repository owns its names
    roots = parts[1:2] if parts[:1] == ("src",) else parts[:1]
    shadows = {r.removesuffix(".py") for r in roots} & (SHADOWING_DIRS - _OWNERS.get(repo, set()))
    if shadows:
        return "shadows the test framework"
    return None


def split_patch(patch: str) -> list[tuple[list[str], str]]:
    """A git diff as (paths it names, text) per file section."""
    sections: list[tuple[list[str], str]] = []
    current: list[str] = []
    paths: list[str] = []
    for line in patch.splitlines(keepends=True):
        match = _DIFF_HEADER.match(line.rstrip("\n"))
        if match:
            if current:
                sections.append((paths, "".join(current)))
            current, paths = [line], [match.group(1), match.group(2)]
            continue
        if line.startswith(("--- a/", "+++ b/", "rename from ", "rename to ", "copy from ",
                            "copy to ")):  # fmt: skip
            paths.append(line.split(" ", 2)[-1].rstrip("\n").removeprefix("a/").removeprefix("b/"))
        if current or line.strip():
            current.append(line)
    if current:
        sections.append((paths, "".join(current)))
    return sections


def filter_patch(
    patch: str, runner_files: set[str], repo: str = ""
) -> tuple[str, list[dict[str, str]]]:
    """(the patch without protected files, what was dropped and why).

    Text outside `diff --git` sections (a plain unified diff) is dropped whole: the judge
    cannot tell which files it touches the way `patch` would read it."""
    kept: list[str] = []
    dropped: list[dict[str, str]] = []
    for paths, text in split_patch(patch):
        if not text.startswith("diff --git "):
            dropped.append({"path": "?", "reason": "not a git diff section"})
            continue
        reasons = {p: protected_reason(p, runner_files, repo) for p in paths if p != "/dev/null"}
        bad = {p: r for p, r in reasons.items() if r}
        if bad:
            path, reason = next(iter(bad.items()))
            dropped.append({"path": path, "reason": reason})
        else:
            kept.append(text if text.endswith("\n") else text + "\n")
    return "".join(kept), dropped


def test_command(eval_script: str) -> str:
    """The eval script's test command: the line after the start-of-output marker."""
    _, found, rest = eval_script.partition(START_MARK + "\n")
    return rest.split("\n", 1)[0] if found else ""


def runner_files(command: str) -> set[str]:
    """Repository files the test command executes directly (e.g. sympy's bin/test)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return set()
    words = [w for w in words if "=" not in w.split("/")[0]]  # drop VAR=value prefixes
    first = words[0] if words else ""
    return {first.removeprefix("./")} if "/" in first and not first.startswith("/") else set()


def test_files(command: str) -> list[str]:
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    return [w for w in words if w.endswith(".py") and not w.startswith("-")]


@dataclass(frozen=True)
class Canaries:
    """Tests the judge adds to the test files where it has no copy of a real test to make,
    named afresh for each evaluation by the generator the copies use (the file's own
    test-name words), comparing values the file holds: no name or literal tells them apart
    from the file's tests by spelling (their bodies call no code under test)."""

    must_pass: str
    must_fail: str
    files: tuple[str, ...]
    values: tuple[str, str, str] = ("", "", "")
    """Literal spellings: the must-pass canary compares the first with itself, the
    must-fail one the second with the third (different values)."""

    @classmethod
    def draw(
        cls, files: list[str], names: tuple[str, str] | None = None,
        literals: Sequence[str] = (),
    ) -> Canaries:  # fmt: skip
        """`names` from the copies' generator where the files could be read, `literals`
        the plain literals they hold (else fresh numbers, fresh names)."""
        if names is None:
            nonce = secrets.token_hex(6)
            names = (f"test_{nonce}_ok", f"test_{nonce}_bad")
        pool = sorted(set(literals))
        by_value = {_value(x): x for x in pool}
        if len(by_value) >= 2:
            keys = list(by_value)
            have = secrets.randbelow(len(keys))
            other = (have + 1 + secrets.randbelow(len(keys) - 1)) % len(keys)
            same = pool[secrets.randbelow(len(pool))]
            values = (same, by_value[keys[have]], by_value[keys[other]])
        else:
            a, b = secrets.randbelow(10**6), secrets.randbelow(10**6)
            values = (str(a), str(b), str(b + 1))
        return cls(names[0], names[1], tuple(files), values)

    def source(self) -> str:
        same, have, other = self.values if all(self.values) else ("1", "2", "3")
        return (
            f"\n\ndef {self.must_pass}():\n    value = {same}\n    assert value == {same}\n"
            f"\n\ndef {self.must_fail}():\n    value = {have}\n    assert value == {other}\n"
        )

    def owns(self, test: str) -> bool:
        """Whether a report key names one of these canaries."""
        return any(test == n or re.search(rf"[:.\s/]{re.escape(n)}($|[\[\s])", test)
                   for n in (self.must_pass, self.must_fail))  # fmt: skip

    def status(self, tests: dict[str, str], name: str) -> list[str]:
        """The statuses reported for canary `name` (one per test file it was added to)."""
        # pytest ids end `::name`; sympy's parser keys failures `path.py:name`
        return [s for t, s in tests.items() if t == name or t.endswith(":" + name)]

    def evidence(self, tests: dict[str, str]) -> str | None:
        """Why the report cannot be trusted, or None when both canaries behaved."""
        good = self.status(tests, self.must_pass)
        bad = self.status(tests, self.must_fail)
        if any(s in ("PASSED", "XFAIL") for s in bad):
            return f"the must-fail canary {self.must_fail} was reported {bad}"
        # One report per test file where the runner keys tests by file (pytest); sympy's
        # runner keys passes by bare name, so one file's canary stands for all there.
        keyed = any(t.endswith(":" + self.must_pass) for t in tests)
        need = len(self.files) if keyed else 1
        if len(good) < need or len(bad) < need:
            return (
                f"canaries missing from the report: {self.must_pass} {good},"
                f" {self.must_fail} {bad} (expected {need})"
            )
        if any(s != "PASSED" for s in good):
            return f"the must-pass canary {self.must_pass} was reported {good}"
        return None


def _value(spelling: str) -> tuple[str, object]:
    """A literal's value as Python compares it: `1` and `1.0` are one value, `"1"` another."""
    try:
        value = ast.literal_eval(spelling)
    except (ValueError, SyntaxError):
        return ("?", spelling)
    if isinstance(value, int | float):
        return ("n", float(value))
    return ("s", value)
