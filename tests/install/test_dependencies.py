"""Every third-party module that dgm or its tests import is declared in pyproject.toml
(dependencies or an extra), and the asset lookup's failures name the right fix."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from dgm import paths
from dgm.errors import NotFoundError
from tests.needs import missing

REPO = Path(__file__).resolve().parents[2]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        specs += extra
    return {_normal(re.match(r"[A-Za-z0-9._-]+", spec).group(0)) for spec in specs}


def _local_names() -> set[str]:
    names = {"dgm", "tests"}
    for root in ("dgm", "tests", "seed_agent"):
        for path in (REPO / root).rglob("*"):
            names.add(path.stem if path.suffix == ".py" else path.name)
    return names


def _imported_top_levels() -> set[str]:
    found: set[str] = set()
    for root in ("dgm", "tests"):
        for path in (REPO / root).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    found.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - _local_names() - {"__future__"}


def test_every_imported_package_is_declared() -> None:
    owners = metadata.packages_distributions()
    declared = _declared()
    undeclared = {}
    for module in sorted(_imported_top_levels()):
        # Not installed here (an extra not chosen): its distribution is named like it.
        dists = {_normal(d) for d in owners.get(module, [])} or {_normal(module)}
        if not dists & declared:
            undeclared[module] = sorted(dists)
    assert not undeclared, f"imported but not declared in pyproject.toml: {undeclared}"


def test_swebench_bound_matches_the_api_we_call() -> None:
    try:
        import swebench  # noqa: F401
    except ImportError as exc:
        missing("swebench", f"the swebench package is not installed: {exc}")
    from swebench.harness.utils import load_swebench_dataset, make_test_spec  # 5.x places

    assert callable(make_test_spec) and callable(load_swebench_dataset)
    assert metadata.version("swebench").split(".")[0] == "5"


def test_missing_assets_say_reinstall_not_seed(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(paths, "assets_root", lambda: tmp_path)
    with pytest.raises(NotFoundError) as info:
        paths.seed_agent_dir()
    assert "reinstall dgm" in info.value.hint and "--seed" not in info.value.hint
    monkeypatch.setenv("DGM_CONTAINERS_DIR", str(tmp_path))
    with pytest.raises(NotFoundError, match="DGM_CONTAINERS_DIR"):
        paths.containers_dir()
