"""The setup step's audit: what the eval script's reinstall left in the container.

The setup step runs code of the patch (a build backend imports the package for its
version), which could plant start-up code for the tests step (a `.pth` in the env, a
`.pyc` beside a test) that runs before the judge's stream plugin loads (red team round
eight P). The wrapper (`script`) prints, before any code of the patch runs, the hashes of
the files a legit reinstall rewrites with identical content; runs the setup; kills every
process it left; deletes every `.pyc` made since it started (Python makes them again);
then lists every file changed since it started. Only the image's own tools are used, by
absolute path: the patch can put things on the env's PATH, not in /usr/bin (the dgm
images run the judge as a user that does not own them).

The host (`evidence`) reads the first before-block (nothing of the patch has run yet)
and the last after-block (nothing of the patch runs after the kill; an earlier one may
be its forgery). Evidence: a changed file under /testbed the patch could not have
changed itself (`guard.protected_reason`), a new or changed file anywhere else but a
dist-info's metadata or a rewrite of the same kind, name and content as one before, an
unreadable or odd path, a listing cut at its cap, a missing or garbled block.
"""

from __future__ import annotations

import re
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
_SCRIPT = f"""cd {REPO_DIR} || exit 90
S=$(/usr/bin/date +%s.%N)
echo '{MARK} before-begin'
{_BEFORE}
echo '{MARK} before-end'
/bin/bash /stage/@SCRIPT@
kill -9 -1 2>/dev/null
roots=(/)
while read -r _ _ _ _ m _; do
  case $m in /|{_SKIP_MOUNTS}) ;; *) roots+=("$m") ;; esac
done < /proc/self/mountinfo
/usr/bin/find "${{roots[@]}}" -xdev -name '*.pyc' ! -type d -newerct "@$S" -delete 2>/dev/null
E=$(/usr/bin/mktemp)
n=0; odd=0
echo '{MARK} after-begin'
while IFS= read -r -d '' p; do
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
_HASH = re.compile(r"^([0-9a-f]{64})  (/.*)$")
_ENTRY = re.compile(r"^(F [0-9a-f]{64}|[LUOE]) (.+)$")
_END = re.compile(rf"^{re.escape(MARK)} after-end (\d+) ([01])$")


def script(setup: str) -> str:
    """The wrapper of the staged setup script `setup` (a file name under /stage)."""
    return _SCRIPT.replace("@SCRIPT@", setup)


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


@dataclass
class Audit:
    evidence: str | None
    changed: list[str] = field(default_factory=list)  # every listed path, for the details

    def note(self) -> dict[str, Any]:
        return {"changed": self.changed[:50], "n_changed": len(self.changed),
                "evidence": self.evidence}  # fmt: skip


def _before(lines: list[str]) -> set[tuple[str, str, str]] | None:
    """(kind, name, sha256) of the first before-block's files, None when it is missing."""
    try:
        start = lines.index(f"{MARK} before-begin")
        end = lines.index(f"{MARK} before-end", start)
    except ValueError:
        return None
    found: set[tuple[str, str, str]] = set()
    for line in lines[start + 1 : end]:
        match = _HASH.match(line)
        if match and kind(match.group(2)):
            found.add((str(kind(match.group(2))), PurePosixPath(match.group(2)).name,
                       match.group(1)))  # fmt: skip
    return found


def audit(output: str, runner_files: set[str], repo: str = "") -> Audit:
    """The setup step's output (the wrapper's) read as hostile input."""
    lines = output.splitlines()
    before = _before(lines)
    ends = [i for i, line in enumerate(lines) if _END.match(line)]
    begins = [i for i, line in enumerate(lines[: ends[-1]] if ends else []) if
              line == f"{MARK} after-begin"]  # fmt: skip
    if before is None or not begins:
        return Audit("the setup step's audit is missing (its output was cut or forged)")
    end = _END.match(lines[ends[-1]])
    assert end is not None
    entries = lines[begins[-1] + 1 : ends[-1]]
    changed: list[str] = []
    found: str | None = None
    for line in entries:
        match = _ENTRY.match(line)
        if not match:
            found = found or f"a garbled line in the setup step's audit: {line[:200]!r}"
            continue
        tag, path = match.group(1), match.group(2)
        changed += [] if tag == "E" else [path]
        why = _why(tag, path, before, runner_files, repo)
        found = found or why
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
    if tag.startswith("F ") and sort and (sort, p.name, tag[2:]) in before:
        return None  # rewritten as it was
    return f"the setup step wrote {path} outside the repository"
