"""The setup step's audit: what the eval script's reinstall left in the container.

The setup step runs code of the patch (a build backend imports the package for its
version), which could plant start-up code for the tests step (a `.pth` in the env, a
`.pyc` beside a test) that runs before the judge's stream plugin loads (red team round
eight P). The setup exec (`setup_script`) prints, before any code of the patch runs, its
start time, the hashes of the files a legit reinstall rewrites with identical content
and which of the patch's files exist; runs the setup; kills every process it left. An
exec of its own (`audit_script`: no process of the patch is its ancestor or left to
write into it) deletes every `.pyc` made since the start (Python makes them again; one
planted is loaded instead of the source), then lists every file changed since. Only the
image's own tools run, by absolute path: the patch can put things on the env's PATH, not
in /usr/bin (the dgm images run the judge as a user that does not own it).

The host (`audit`) reads the setup exec's first before-block and the audit exec's last
block. Evidence: a changed file under /testbed the patch could not have changed itself
(`guard.protected_reason`), a file of the patch moved or rewritten (a folder renamed
into the env keeps its files' ctimes), a new or changed file anywhere else but a
dist-info's metadata or a rewrite of the same kind and content as one before, an
unreadable or odd path, a listing cut at its cap, a missing or garbled block.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from dgm.benchmarks.swebench import guard as swe_guard

REPO_DIR = "/testbed"
MARK = "@@dgm-setup-audit"
CAP = 500  # lines of the after-block's listing; more is evidence
ENVS = "/opt/miniconda3"
# start-up files and scripts a reinstall rewrites (same name, same content)
_BEFORE = (
    f"/usr/bin/find {ENVS} \\( -path '*/site-packages/*.pth'"
    " -o -path '*/site-packages/__editable__*' -o -path '*/site-packages/*.egg-link'"
    f" -o -path '{ENVS}/bin/*' -o -path '{ENVS}/envs/*/bin/*'"
    " -o -path '*.dist-info/entry_points.txt' \\) -type f -exec /usr/bin/sha256sum {} + 2>/dev/null"
)
# mounts not scanned: the kernel's, the scratch /tmp, the judge's read-only stage
_SKIP_MOUNTS = "/proc*|/sys*|/dev*|/tmp|/tmp/*|/run*|/stage|/stage/*"
_PRUNE = (
    "\\( -path /proc -o -path /sys -o -path /dev -o -path /tmp -o -path /var/tmp -o -path /run"
    f" -o -path /stage -o -path {REPO_DIR}/.git -o -path {REPO_DIR}/build -o -name .cache"
    " -o -name '*.egg-info' -o -name .eggs \\) -prune -o"
    # a folder this user can neither list nor enter, unchanged since the start, holds
    # nothing the setup made (the image's /root, /etc/ssl/private); one it changed is listed
    ' \\( -type d ! -readable ! -executable ! -newerct "@$S" \\) -prune -o'
)
_SETUP = f"""cd {REPO_DIR} || exit 90
S=$(/usr/bin/date +%s.%N)
echo "{MARK} before-begin $S"
{_BEFORE}
@PATCHED@echo '{MARK} before-end'
/bin/bash /stage/@SCRIPT@
kill -9 -1 2>/dev/null
exit 0
"""
_AUDIT = f"""cd / || exit 90
kill -9 -1 2>/dev/null
S=@START@
roots=(/)
while read -r _ _ _ _ m _; do
  case $m in /|{_SKIP_MOUNTS}) ;; *) roots+=("$m") ;; esac
done < /proc/self/mountinfo
/usr/bin/find "${{roots[@]}}" -xdev -name '*.pyc' ! -type d -newerct "@$S" -delete 2>/dev/null
E=$(/usr/bin/mktemp)
n=0; odd=0
echo '{MARK} after-begin'
@PATCHED@while IFS= read -r -d '' p; do
  n=$((n + 1)); [ $n -gt {CAP} ] && break
  case $p in *[$'\\n\\r']*) odd=1; continue ;; esac
  if [ -L "$p" ]; then echo "L $p"
  elif [ -f "$p" ]; then
    {{ h=$(/usr/bin/sha256sum < "$p"); }} 2>/dev/null && echo "F ${{h%% *}} $p" || echo "U $p"
  else echo "O $p"; fi
done < <(/usr/bin/find "${{roots[@]}}" -xdev {_PRUNE} ! -type d -newerct "@$S" -print0 2>"$E")
while IFS= read -r line; do echo "E ${{line//[^[:print:]]/?}}"; done < <(/usr/bin/head -n 5 "$E")
echo "{MARK} after-end $n $odd"
exit 0
"""
_START = re.compile(rf"^{re.escape(MARK)} before-begin (\d+\.\d+)$")
_HASH = re.compile(r"^([0-9a-f]{64})  (/.*)$")
_ENTRY = re.compile(r"^(F [0-9a-f]{64}|[LUOEP]) (.+)$")
_END = re.compile(rf"^{re.escape(MARK)} after-end (\d+) ([01])$")


def _present(patched: list[str]) -> str:
    """Lines printing `P <path>` for each file of the patch that exists."""
    paths = [f"{REPO_DIR}/{p}" for p in patched if p.isprintable()]
    return "".join(f"[ -e {shlex.quote(p)} ] && echo {shlex.quote('P ' + p)}\n" for p in paths)


def patched_files(patch: str) -> list[str]:
    """The files the (kept) patch leaves in the repository."""
    return [paths[1] for paths, text in swe_guard.split_patch(patch)
            if len(paths) > 1 and "\ndeleted file mode" not in text]  # fmt: skip


def setup_script(setup: str, patched: list[str]) -> str:
    """The setup exec: the before-block (the start time, the hashes, which of the patch's
    files exist), then the staged setup script `setup`, then every process killed."""
    return _SETUP.replace("@PATCHED@", _present(patched)).replace("@SCRIPT@", setup)


def start(setup_output: str) -> str | None:
    """The start time the setup exec printed first (before any code of the patch ran)."""
    for line in setup_output.splitlines():
        if line.startswith(f"{MARK} before-begin"):
            match = _START.match(line)
            return match.group(1) if match else None
    return None


def audit_script(started: str, patched: list[str]) -> str:
    """The audit exec, after the setup's (nothing of the patch runs: the setup killed
    every process it left, the backend again, and this once more): pycs made since
    `started` deleted, then which of the patch's files exist, and every changed file."""
    if not _START.match(f"{MARK} before-begin {started}"):
        raise ValueError(f"not a start time: {started!r}")
    return _AUDIT.replace("@START@", started).replace("@PATCHED@", _present(patched))


def kind(path: str) -> str | None:
    """Which of the files a reinstall rewrites `path` is, or None."""
    p = PurePosixPath(path)
    if p.name.endswith(".pth") and "site-packages" in p.parts:
        return "pth"
    if p.name.startswith("__editable__") and "site-packages" in p.parts:
        return "editable"
    if p.name.endswith(".egg-link"):
        return "egg-link"
    if p.parent.name == "bin" and path.startswith(ENVS + "/"):
        return "bin"
    if p.name == "entry_points.txt" and p.parent.name.endswith(".dist-info"):
        return "entry_points"
    return None


def _name(sort: str, path: str) -> str:
    """What must match besides the content: a script's name (flask's script installed as
    `pytest` is not a rewrite); any name for the others, whose content is what acts (the
    image may have installed the package under another version: pytest-10051's
    `__editable__.pytest-0.1.dev1+g....pth` is the reinstall's `__editable__.pytest-7.2.pth`)."""
    return PurePosixPath(path).name if sort == "bin" else ""


@dataclass
class Audit:
    evidence: str | None
    changed: list[str] = field(default_factory=list)  # every listed path, for the details

    def note(self) -> dict[str, Any]:
        return {"changed": self.changed[:50], "n_changed": len(self.changed),
                "evidence": self.evidence}  # fmt: skip


@dataclass
class _Before:
    hashes: set[tuple[str, str, str]]  # (kind, _name, sha256)
    present: set[str]  # the patch's files that existed


def _before(lines: list[str]) -> _Before | None:
    """The setup exec's first before-block, None when it is missing."""
    begin = next((i for i, line in enumerate(lines) if line.startswith(f"{MARK} before-begin")),
                 None)  # fmt: skip
    if begin is None or f"{MARK} before-end" not in lines[begin:]:
        return None
    found = _Before(set(), set())
    for line in lines[begin + 1 : lines.index(f"{MARK} before-end", begin)]:
        match = _HASH.match(line)
        sort = kind(match.group(2)) if match else None
        if match and sort:
            found.hashes.add((sort, _name(sort, match.group(2)), match.group(1)))
        if line.startswith("P /"):
            found.present.add(line[2:])
    return found


def audit(setup_output: str, audit_output: str, runner_files: set[str],
          repo: str = "") -> Audit:  # fmt: skip
    """The setup exec's and the audit exec's outputs, read as hostile input."""
    before = _before(setup_output.splitlines())
    lines = audit_output.splitlines()
    ends = [i for i, line in enumerate(lines) if _END.match(line)]
    begins = [i for i, line in enumerate(lines[: ends[-1]] if ends else []) if
              line == f"{MARK} after-begin"]  # fmt: skip
    if before is None or not begins:
        return Audit("the setup step's audit is missing (its output was cut or forged)")
    end = _END.match(lines[ends[-1]])
    assert end is not None
    changed: list[str] = []
    present: set[str] = set()
    found: str | None = None
    for line in lines[begins[-1] + 1 : ends[-1]]:
        match = _ENTRY.match(line)
        if not match:
            found = found or f"a garbled line in the setup step's audit: {line[:200]!r}"
            continue
        tag, path = match.group(1), match.group(2)
        if tag == "P":
            present.add(path)
            continue
        changed += [] if tag == "E" else [path]
        if path in before.present:  # moved away and put back: a rename into the env
            found = found or f"the setup step rewrote {path}, a file of the patch"
        found = found or _why(tag, path, before.hashes, runner_files, repo)
    gone = sorted(before.present - present)
    if gone:  # a folder of the patch's files renamed elsewhere keeps their old ctimes
        found = found or f"the setup step moved {gone[0]}, a file of the patch"
    if int(end.group(1)) > CAP:
        found = found or f"the setup step changed more than {CAP} files"
    if end.group(2) == "1":
        found = found or "the setup step made a file whose name holds a line break"
    return Audit(found, changed)


def _why(tag: str, path: str, before: set[tuple[str, str, str]], runner_files: set[str],
         repo: str) -> str | None:  # fmt: skip
    """Why one listed path is evidence, or None."""
    if tag == "E":
        return f"the setup step left a path the audit cannot read: {path[:200]}"
    if tag in ("U", "O"):
        return f"the setup step left an unreadable or special file: {path}"
    p = PurePosixPath(path)
    if path.startswith(REPO_DIR + "/"):
        reason = swe_guard.protected_reason(path[len(REPO_DIR) + 1 :], runner_files, repo)
        return f"the setup step changed {path} ({reason})" if reason else None
    if (
        tag.startswith("F ")
        and p.name != "entry_points.txt"
        and any(q.endswith(".dist-info") for q in p.parts[:-1])
    ):
        return None  # an installed distribution's metadata (its entry points are not)
    sort = kind(path)
    if tag.startswith("F ") and sort and (sort, _name(sort, path), tag[2:]) in before:
        return None  # rewritten as it was
    return f"the setup step wrote {path} outside the repository"
