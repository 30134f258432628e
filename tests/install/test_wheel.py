"""dgm installs like a tool: the wheel carries everything, and a non-editable install
runs from any directory.

The wheel is built from this checkout and installed (`--no-deps`) into a fresh venv
whose only other import path is this environment's site-packages (a .pth line: that
adds the dependencies, not the editable install's finder). Every check first proves the
`dgm` it runs is the wheel's copy inside the venv, not this repository.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.needs import missing

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("DGM_SHARED_DIR", REPO.parent / "shared"))
ASSET_TREES = ("seed_agent", "containers", "eval")
MUST_CARRY = (
    "dgm/_assets/seed_agent/agent.toml",
    "dgm/_assets/containers/base/recipe.toml",
    "dgm/_assets/containers/runtime/Dockerfile",
    "dgm/_assets/containers/polyglot/Dockerfile",
    "dgm/_assets/containers/swebench/instance.Dockerfile",
    "dgm/_assets/eval/subsets/polyglot_dry_run.txt",
    "dgm/_assets/eval/subsets/swe_dry_run.txt",
    "dgm/_assets/eval/swe-dgm-suite/instances.jsonl",
    "dgm/_assets/eval/swe-dgm-suite/.dockerignore",
    "dgm/gateway/prices.toml",
    "dgm/benchmarks/agents/oracle/agent.toml",
    "dgm/benchmarks/polyglot/judge_prep.py",  # copied into the judge container by path
    "dgm/benchmarks/polyglot/nospawn.py",  # (and these two beside it)
    "dgm/benchmarks/polyglot/build_scan.py",
    "dgm/jobs/expand/tool_smoke.py",  # copied into a tool's smoke-check sandbox by path
    "dgm/scripted/script_files/search_tool.py.txt",
    "dgm/serve/static/index.html",  # dgm serve's page: offline, from the wheel
    "dgm/serve/static/app.js",
    "dgm/serve/static/tree.js",
    "dgm/serve/static/chart.js",
    "dgm/serve/static/app.css",
)
PROBE = """
import json, dgm
from dgm import paths
from dgm.sandbox import images
from dgm.benchmarks.swebench import suite_image
print(json.dumps({"dgm": dgm.__file__, "assets": str(paths.assets_root()),
                  "wheel": paths.installed_from_wheel(),
                  "tags": [images.tag(n) for n in images.IMAGE_NAMES] + [suite_image.tag()]}))
"""


def _source_files(tree: str) -> set[str]:
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "--", tree],
                            capture_output=True, text=True)  # fmt: skip
    if listed.returncode == 0 and listed.stdout.strip():
        return {f"dgm/_assets/{name}" for name in listed.stdout.split("\n") if name}
    return {  # not a git checkout: what is on disk, less caches
        f"dgm/_assets/{p.relative_to(REPO)}"
        for p in (REPO / tree).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # As `pip install .` builds it: in an isolated build environment (from pip's cache).
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-q",
                    "-w", str(out)], check=True, timeout=600)  # fmt: skip
    (found,) = out.glob("dgm-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = subprocess.run([str(python), "-c", where], capture_output=True, text=True, check=True)
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(purelib.stdout.strip(), "zz_dgm_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    # --ignore-installed: never touch the editable dgm this environment already has.
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--ignore-installed", str(wheel)], check=True, timeout=300)  # fmt: skip
    return root


def in_venv(venv: Path, args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DGM_CONTAINERS_DIR")}
    path = f"{venv / 'bin'}:{clean['PATH']}"
    return subprocess.run(args, capture_output=True, text=True, cwd=cwd, timeout=1800,
                          env={**clean, "PATH": path, **env})  # fmt: skip


def test_wheel_carries_every_asset(wheel) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert set(MUST_CARRY) <= names
    for tree in ASSET_TREES:
        missing = _source_files(tree) - names
        assert not missing, f"the wheel lacks {sorted(missing)[:5]}"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_installed_wheel_finds_its_own_assets_from_any_directory(venv, tmp_path) -> None:
    probe = in_venv(venv, [str(venv / "bin" / "python"), "-c", PROBE], cwd=tmp_path)
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    assert Path(found["dgm"]).is_relative_to(venv) and found["wheel"]
    assert Path(found["assets"]).is_relative_to(venv)
    # The same image tags as this checkout: images built from a checkout serve the install.
    from dgm.benchmarks.swebench import suite_image
    from dgm.sandbox import images

    assert found["tags"] == [images.tag(n) for n in images.IMAGE_NAMES] + [suite_image.tag()]
    version = in_venv(venv, ["dgm", "--version"], cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("dgm ")
    typo = in_venv(venv, ["dgm", "run", "--bogus"], cwd=tmp_path)
    assert typo.returncode == 2 and len(typo.stderr.strip().splitlines()) == 1


@pytest.mark.docker
@pytest.mark.slow
def test_dry_run_from_the_installed_wheel_in_another_directory(venv, tmp_path) -> None:
    data = SHARED / "polyglot-benchmark"
    if not data.is_dir():
        missing("polyglot", f"polyglot benchmark not found at {data}")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run_dir = tmp_path / "x"
    env = {"DGM_POLYGLOT_DIR": str(data), "HOME": str(tmp_path)}
    result = in_venv(venv, ["dgm", "run", str(run_dir), "--dry-run"], cwd=elsewhere, **env)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "best:    node" in result.stdout and "/4" in result.stdout
    config = (run_dir / "run.toml").read_text()
    assert str(venv) in config  # the dry-run task list came from the wheel's copy
    assert not (REPO / "archive" / "x").exists() and not list(elsewhere.iterdir())
