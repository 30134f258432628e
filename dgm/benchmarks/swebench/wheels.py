"""Wheelhouses for SWE-bench images, made on the host with pip.

Build containers here cannot verify the package index's TLS chain, and the judge has
no network at all, so every wheel an image needs (for its own install and for the
eval script's reinstall of the patched project) is made on the host and copied in.
The host's Python must match the environment's (compiled wheels are per version).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path

from dgm.benchmarks.swebench.data import REQUIREMENTS, Environment, pip_args
from dgm.errors import DgmError

Log = Callable[[str], None]
DEFAULT_BUILD_REQUIRES = ["setuptools>=40.8.0", "wheel"]
ALWAYS = ["setuptools", "wheel"]  # the fallback build backend, for any sdist reinstall


def check_python(wanted: str) -> None:
    have = f"{sys.version_info.major}.{sys.version_info.minor}"
    if wanted and not (have == wanted or wanted.startswith(have + ".") or wanted == "3"):
        raise DgmError(
            f"this environment needs Python {wanted}, but dgm runs on Python {have}",
            f"run `dgm sandbox build swebench` from a Python {wanted} install: its wheels are"
            " made by the host's pip",
        )


def _pip(args: list[str], what: str) -> None:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise DgmError(
            f"pip failed while {what}: {proc.stderr.strip()[-1200:]}",
            "check that the package index is reachable from the host (pip config)",
        )


def constraints_file(env: Environment, folder: Path) -> Path:
    path = folder / "constraints.txt"
    path.write_text("".join(f"{c}\n" for c in env.constraints))
    return path


def env_wheels(env: Environment, dest: Path, log: Log) -> None:
    """Wheels for the environment's install steps (and setuptools/wheel) into `dest`."""
    check_python(env.python)
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="dgm-wheels-") as tmp:
        cons = constraints_file(env, Path(tmp))
        req = Path(tmp) / "requirements.txt"
        req.write_text(env.requirements_txt)
        for step in [*env.steps, "python -m pip install " + " ".join(ALWAYS)]:
            args = pip_args(step)
            if args is None:
                raise DgmError(
                    f"install step {step!r} of {env.repo} {env.version} is not a pip install",
                    "offline images run pip install steps only; use the official image",
                )
            args = [str(req) if a == REQUIREMENTS else a for a in args]
            log(f"  wheels: {step}")
            _pip(["wheel", "-q", "-w", str(dest), "--find-links", str(dest), "-c", str(cons),
                  *args], f"making wheels for {step!r}")  # fmt: skip


def project_wheels(
    repo_dir: Path, steps: tuple[str, ...], env: Environment, dest: Path, log: Log
) -> None:
    """Wheels for the project's dependencies and build requirements into `dest`.

    pip resolves the install on the host (`--dry-run --report`), then makes a wheel for
    every package it picked except the project itself.
    """
    check_python(env.python)
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="dgm-wheels-") as tmp:
        cons = constraints_file(env, Path(tmp))
        pins: set[str] = set()
        for step in steps:
            args = [a for a in pip_args(step) or [] if a not in ("-e", "--editable")]
            args = [str(repo_dir) + a[1:] if a == "." or a.startswith(".[") else a for a in args]
            report = Path(tmp) / "report.json"
            log(f"  resolving: {step}")
            _pip(["install", "-q", "--dry-run", "--ignore-installed", "--report", str(report),
                  "-c", str(cons), *args], f"resolving {step!r}")  # fmt: skip
            for item in json.loads(report.read_text()).get("install", []):
                if not item.get("is_direct"):
                    meta = item["metadata"]
                    pins.add(f"{meta['name']}=={meta['version']}")
        requires = build_requires(repo_dir)
        log(f"  wheels: {len(pins)} dependencies, build requires {' '.join(requires)}")
        if pins:
            _pip(["wheel", "-q", "--no-deps", "-w", str(dest), "--find-links", str(dest),
                  *sorted(pins)], "making the project's dependency wheels")  # fmt: skip
        _pip(["wheel", "-q", "-w", str(dest), "--find-links", str(dest), "-c", str(cons),
              *requires, *ALWAYS], "making the project's build requirements")  # fmt: skip


def build_requires(repo_dir: Path) -> list[str]:
    pyproject = repo_dir / "pyproject.toml"
    if not pyproject.is_file():
        return list(DEFAULT_BUILD_REQUIRES)
    try:
        data = tomllib.loads(pyproject.read_text())
    except tomllib.TOMLDecodeError:
        return list(DEFAULT_BUILD_REQUIRES)
    system = data.get("build-system", {})
    return [str(r) for r in system.get("requires", DEFAULT_BUILD_REQUIRES)]
