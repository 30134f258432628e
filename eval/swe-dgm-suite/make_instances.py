"""Regenerate instances.jsonl of dgm's own SWE-bench-format suite from repo/ and BUGS.

    python eval/swe-dgm-suite/make_instances.py

For each bug: the gold patch (the fix) and the test patch (new tests) are diffs made
with git against the base commit, and FAIL_TO_PASS / PASS_TO_PASS come from running
the tests before and after the fix (our own code, on the host, with pytest). The base
commit is deterministic (fixed author, dates), so the image built from the Dockerfile
has the very same commit at /testbed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_NAME = "dgm/tinyutil"
IMAGE = "dgm/swe-dgm-suite"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "dgm", "GIT_AUTHOR_EMAIL": "dgm@localhost",
    "GIT_COMMITTER_NAME": "dgm", "GIT_COMMITTER_EMAIL": "dgm@localhost",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
}  # fmt: skip
# (number, problem statement, {file: (old, new)} fix, {test file: text appended})
BUGS = [
    (
        1,
        "is_leap_year() says 1900 was a leap year. In the Gregorian calendar a year "
        "divisible by 100 is a leap year only if it is also divisible by 400, so 1900 "
        "and 2100 are not leap years but 2000 is. days_in_month(1900, 2) returns 29 too.",
        {
            "tinyutil/dates.py": (
                "return year % 4 == 0\n",
                "return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n",
            )
        },
        {
            "tests/test_dates.py": (
                "\n\ndef test_century_leap_years():\n    assert not is_leap_year(1900)\n"
                "    assert not is_leap_year(2100)\n    assert is_leap_year(2000)\n"
                "    assert days_in_month(1900, 2) == 28\n"
            )
        },
    ),
    (
        2,
        "to_roman(4) returns 'IIII' and to_roman(1994) returns 'MDCCCCLXXXXIIII'. Roman "
        "numerals use subtractive notation: 4 is IV, 9 is IX, 40 XL, 90 XC, 400 CD, 900 CM, "
        "so 1994 should be 'MCMXCIV'.",
        {
            "tinyutil/numbers.py": (
                '_NUMERALS = [(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), '
                '(5, "V"), (1, "I")]\n',
                '_NUMERALS = [\n    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"),'
                ' (100, "C"), (90, "XC"),\n    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"),'
                ' (5, "V"), (4, "IV"), (1, "I"),\n]\n',
            )
        },
        {
            "tests/test_numbers.py": (
                '\n\ndef test_roman_subtractive():\n    assert to_roman(4) == "IV"\n'
                '    assert to_roman(9) == "IX"\n    assert to_roman(1994) == "MCMXCIV"\n'
            )
        },
    ),
    (
        3,
        "slugify('  Hello,  World! ') returns '--hello---world--' instead of "
        "'hello-world'. A run of characters that are not letters or digits should become "
        "a single dash, and the slug should not start or end with a dash.",
        {
            "tinyutil/text.py": (
                'return re.sub(r"[^a-z0-9]", "-", text.lower())\n',
                'return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")\n',
            )
        },
        {
            "tests/test_text.py": (
                "\n\ndef test_slugify_punctuation():\n"
                '    assert slugify("  Hello,  World! ") == "hello-world"\n'
                '    assert slugify("a--b") == "a-b"\n'
            )
        },
    ),
]


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def test_status(repo: Path) -> dict[str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "tests"],
        cwd=repo, capture_output=True, text=True,
    )  # fmt: skip
    status = {}
    for line in proc.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "ERROR") and rest:
            status[rest.split(" - ")[0].strip()] = word
    return status


def eval_script(base: str, test_files: list[str], test_patch: str) -> str:
    """The SWE-bench 5.x eval script shape: reset the test files, apply the test patch,
    run the tests between the markers, reset again."""
    files = " ".join(test_files)
    return "\n".join([
        "#!/bin/bash",
        "set -uxo pipefail",
        "cd /testbed",
        f"git checkout {base} {files}",
        "git apply -v - <<'EOF_114329324912'",
        test_patch.rstrip("\n"),
        "EOF_114329324912",
        ": '>>>>> Start Test Output'",
        f"python3 -m pytest -rA -p no:cacheprovider {files}",
        ": '>>>>> End Test Output'",
        f"git checkout {base} {files}",
    ]) + "\n"  # fmt: skip


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(HERE / "repo", repo, ignore=shutil.ignore_patterns("__pycache__"))
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "tinyutil 0.1")
        base = git(repo, "rev-parse", "HEAD").strip()
        lines = []
        for number, problem, fix, new_tests in BUGS:
            for name, added in new_tests.items():
                (repo / name).write_text((repo / name).read_text() + added)
            test_patch = git(repo, "diff")
            before = test_status(repo)
            git(repo, "checkout", "-q", "--", ".")
            for name, (old, new) in fix.items():
                text = (repo / name).read_text()
                assert old in text, (number, name)
                (repo / name).write_text(text.replace(old, new))
            gold = git(repo, "diff")
            subprocess.run(["git", "apply"], cwd=repo, input=test_patch, text=True, check=True)
            after = test_status(repo)
            git(repo, "checkout", "-q", "--", ".")
            test_files = sorted(new_tests)
            relevant = {t: s for t, s in after.items() if t.split("::")[0] in test_files}
            instance = {
                "instance_id": f"dgm__tinyutil-{number}",
                "repo": REPO_NAME,
                "base_commit": base,
                "environment_setup_commit": base,
                "version": "0.1",
                "problem_statement": problem,
                "hints_text": "",
                "created_at": "2024-01-01T00:00:00Z",
                "patch": gold,
                "test_patch": test_patch,
                "FAIL_TO_PASS": sorted(t for t, s in relevant.items() if before.get(t) != "PASSED"),
                "PASS_TO_PASS": sorted(t for t, s in relevant.items() if before.get(t) == "PASSED"),
                "image": IMAGE,
                "eval_script": eval_script(base, test_files, test_patch),
                "log_parser": "parse_log_pytest",
                "eval_type": "pass_and_fail",
            }
            assert all(after[t] == "PASSED" for t in relevant), (number, after)
            lines.append(json.dumps(instance))
    (HERE / "instances.jsonl").write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} instances at base commit {base}")


if __name__ == "__main__":
    main()
