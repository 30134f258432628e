"""What the judge keeps of its copies of real tests: the rewritten files, the mapping
from fresh names back to official ones, and the evidence a report gives against itself.
Also the test files as the eval script leaves them (base commit + test patch)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

PASSING = ("PASSED", "XFAIL")


def files_at(git_dir: Path, commit: str, files: list[str]) -> dict[str, str | None]:
    """Each file's text at `commit` of the repository `git_dir` (None: not there), the
    base `with_test_patch` takes (the judge reads them in the container instead; this is
    for offline measurement over the bundled repositories)."""
    base: dict[str, str | None] = {}
    for path in files:
        shown = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"],
                               capture_output=True, text=True)  # fmt: skip
        base[path] = shown.stdout if shown.returncode == 0 else None
    return base


def with_test_patch(base: dict[str, str | None], test_patch: str) -> dict[str, str] | None:
    """The test files after the instance's test patch (a None base: a file it creates);
    one it cannot be applied to here (a rename from a file not read: sqlfluff-1733) or
    deletes is left out; None if none is left."""
    with tempfile.TemporaryDirectory(prefix="dgm-tests-") as tmp:
        root = Path(tmp)
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        for path, text in base.items():
            if text is not None:
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_text(text)
        failed = []
        for path in base:  # one at a time: a rename from a file not read here fails alone
            if not re.search(rf"^diff --git a/\S+ b/{re.escape(path)}$", test_patch, re.M):
                continue  # not in the patch: as at the base commit
            proc = subprocess.run(["git", "apply", f"--include={path}", "-"], cwd=root,
                                  input=test_patch, capture_output=True, text=True)  # fmt: skip
            if proc.returncode != 0:
                failed.append(path)
        out = {p: (root / p).read_text() for p in base
               if p not in failed and (root / p).is_file()}  # fmt: skip
    return out or None


@dataclass
class CopyPlan:
    """The rewritten test files and what the host needs to read the results."""

    files: dict[str, str]
    official: dict[str, str]  # fresh name of a copied original -> its official name
    must_fail: dict[str, str]  # copy's fresh name -> its original's fresh name
    must_pass: dict[str, str]

    def to_official(self, statuses: dict[str, str]) -> dict[str, str]:
        """Per-test statuses under official names, copies left out (a name two keys map
        to keeps the worse status; `collision` calls that tampering)."""
        out: dict[str, str] = {}
        for key, official_key in self._mapped(statuses):
            status = statuses[key]
            if official_key in out and out[official_key] in PASSING:
                status = status if status not in PASSING else out[official_key]
            elif official_key in out:
                status = out[official_key]
            out[official_key] = status
        return out

    def collision(self, statuses: dict[str, str]) -> str | None:
        """Two report keys for one official test: a renamed test's official name is in
        the report beside its fresh one (nothing the judge ran carries it), or a
        malformed report. Never last-wins."""
        seen: dict[str, str] = {}
        for key, official_key in self._mapped(statuses):
            if official_key in seen:
                return f"{key} and {seen[official_key]} both report {official_key}"
            seen[official_key] = key
        return None

    def _mapped(self, statuses: dict[str, str]) -> list[tuple[str, str]]:
        copies = set(self.must_fail) | set(self.must_pass)
        out = []
        for key in statuses:
            if any(_has_name(key, c) for c in copies):
                continue
            mapped = key
            for fresh, official in self.official.items():
                mapped = _rename(mapped, fresh, official)
            out.append((key, mapped))
        return out

    def evidence(
        self, statuses: dict[str, str], claims_pass: bool
    ) -> tuple[str | None, str | None]:
        """(tampering, a must-pass copy that disagreed with its original) in one report."""
        collision = self.collision(statuses)
        if collision:
            return f"a renamed test reported under two names: {collision}", None
        for copy, orig in self.must_fail.items():
            for key, status, orig_status in _pairs(statuses, copy, orig):
                if status in PASSING and orig_status in PASSING:
                    return f"must-fail copy {key} was {status} beside its original", None
        family = set(self.official) | set(self.must_fail) | set(self.must_pass)
        for key, status in statuses.items():
            if status == "XFAIL" and any(_has_name(key, n) for n in family):
                return f"{key} has no xfail marker but was reported XFAIL", None
        missing = [c for c in [*self.must_fail, *self.must_pass]
                   if not any(_has_name(k, c) for k in statuses)]  # fmt: skip
        if missing and claims_pass:
            return f"copies of real tests missing from the report: {missing}", None
        for copy, orig in self.must_pass.items():
            for key, status, orig_status in _pairs(statuses, copy, orig):
                if orig_status in PASSING and status not in PASSING:
                    return None, f"copy {key} of a passing test was {status}"
        return None, None


def _has_name(key: str, name: str) -> bool:
    return re.search(rf"(^|[:.\s/]){re.escape(name)}($|[\[\s])", key) is not None


def _rename(key: str, old: str, new: str) -> str:
    return re.sub(rf"(^|[:.\s/]){re.escape(old)}(?=$|[\[\s])", lambda m: m.group(1) + new, key)


def _pairs(statuses: dict[str, str], copy: str, orig: str) -> list[tuple[str, str, str | None]]:
    out = []
    for key, status in statuses.items():
        if _has_name(key, copy):
            twin = _rename(key, copy, orig)
            # sympy keys a failure `path.py:name` but a pass by the bare name
            orig_status = statuses.get(twin) or statuses.get(orig)
            out.append((key, status, orig_status))
    return out
