"""Every repository path a README names in backticks exists (files move between rooms)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOP = ("dgm/", "tests/", "perf/", "scripts/", "containers/", "eval/", "seed_agent/", "examples/",
       "docs/", ".ci/")  # fmt: skip
WHEEL_ONLY = "dgm/_assets/"  # setup.py copies the trees there when it builds a wheel
NOT_PATHS = {"dgm/benchmarks/foo/"}  # an example of a new benchmark package


def _named_paths(readme: Path) -> list[tuple[int, str]]:
    found = []
    for number, line in enumerate(readme.read_text().splitlines(), 1):
        for token in re.findall(r"`([^`\s]+)`", line):
            path = token.split("::")[0]
            image = re.match(r"dgm/[\w.-]+(:|$)", path) and "." not in path.split("/", 1)[1]
            if path.startswith(WHEEL_ONLY) or path in NOT_PATHS or image or "<" in path:
                continue
            if path.startswith(TOP):
                found.append((number, path.rstrip(".,;")))
    return found


def test_paths_named_in_readmes_exist() -> None:
    readmes = [REPO / "README.md", *(p for top in TOP for p in (REPO / top).glob("**/README.md"))]
    missing = [
        f"{readme.relative_to(REPO)}:{number}: {path}"
        for readme in readmes
        for number, path in _named_paths(readme)
        if not any(list(base.glob(path.split("{")[0])) for base in (REPO, readme.parent))
    ]
    assert len(readmes) > 10 and not missing, "\n".join(missing)


def test_a_moved_module_is_caught(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("see `dgm/loop/executors.py` and `dgm/executors/` (`dgm/runtime:<hash>`)\n")
    named = [path for _, path in _named_paths(readme)]
    assert named == ["dgm/loop/executors.py", "dgm/executors/"]
    assert not (REPO / named[0]).exists() and (REPO / named[1]).is_dir()
