"""A folder of real SWE-bench instances that run offline (the layout of ../shared/swe-bench).

    instances.jsonl          one official record per line (5.x fields: image, eval_script, ...)
    repos/<owner>__<name>.git.tar   bare repositories holding the base commits
    offline_env.json         per instance: python, install steps, requirements_txt; constraints

An *environment* is what instances share below their repository: repo, version, python,
the install steps that do not install the project itself, the requirements text and the
constraints. Instances with equal environments share one environment image.
Nothing here knows any particular instance: every fact comes from the folder.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from dgm.errors import DgmError, NotFoundError

INSTANCES = "instances.jsonl"
OFFLINE_ENV = "offline_env.json"
REQUIREMENTS = "$W/requirements.txt"


def is_data_dir(path: str | Path) -> bool:
    return Path(path, INSTANCES).is_file()


def pip_args(step: str) -> list[str] | None:
    """The arguments of a `python -m pip install ...` step; None for any other command."""
    words = shlex.split(step)
    for prefix in (["python", "-m", "pip", "install"], ["pip", "install"]):
        if words[: len(prefix)] == prefix:
            return words[len(prefix) :]
    return None


def installs_project(step: str) -> bool:
    """Whether a step installs the repository itself (`.`, `.[extras]`, `-e .`)."""
    words = pip_args(step) or shlex.split(step)
    return any(w == "." or w.startswith(".[") for w in words)


@dataclass(frozen=True)
class Environment:
    repo: str
    version: str
    python: str
    steps: tuple[str, ...]
    """Install steps run in the environment image (no project install)."""
    requirements_txt: str
    constraints: tuple[str, ...]

    @property
    def key(self) -> str:
        text = json.dumps([self.repo, self.version, self.python, self.steps,
                           self.requirements_txt, self.constraints])  # fmt: skip
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    @property
    def slug(self) -> str:
        return f"{self.repo.replace('/', '__')}-{self.version}".lower()


@dataclass(frozen=True)
class InstanceEnv:
    instance_id: str
    repo: str
    base_commit: str
    env: Environment
    project_steps: tuple[str, ...]
    """Install steps run in the instance image, with the repository at /testbed."""


class SweData:
    """The instances, environments and repositories of one data folder."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        if not is_data_dir(self.root):
            raise NotFoundError(
                f"{self.root} is not a SWE-bench data folder (no {INSTANCES})",
                "give a folder laid out like ../shared/swe-bench (instances.jsonl, repos/, "
                "offline_env.json)",
            )

    @cached_property
    def instances(self) -> dict[str, dict[str, Any]]:
        path = self.root / INSTANCES
        found: dict[str, dict[str, Any]] = {}
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DgmError(f"{path}:{number} is not JSON: {exc}", "one record a line") from None
            found[record["instance_id"]] = record
        return found

    @cached_property
    def _offline(self) -> dict[str, Any]:
        path = self.root / OFFLINE_ENV
        if not path.is_file():
            return {"instances": {}, "constraints": []}
        return json.loads(path.read_text())

    def select(self, ids: list[str] | None) -> list[str]:
        from dgm.benchmarks.subsets import check_ids

        known = list(self.instances)
        return known if not ids else check_ids(ids, known, str(self.root / INSTANCES))

    def instance_env(self, instance_id: str) -> InstanceEnv:
        record = self.instances[instance_id]
        spec = self._offline["instances"].get(instance_id)
        if spec is None:
            raise DgmError(
                f"{OFFLINE_ENV} in {self.root} has no install steps for {instance_id}",
                "add its entry (python, install) or use its official prebuilt image",
            )
        steps = tuple(spec.get("install", ()))
        env = Environment(
            repo=record["repo"],
            version=str(record.get("version", "")),
            python=str(spec.get("python", "3")),
            steps=tuple(s for s in steps if not installs_project(s)),
            requirements_txt=str(spec.get("requirements_txt", "")),
            constraints=tuple(self._offline.get("constraints", ())),
        )
        project = tuple(s for s in steps if installs_project(s))
        return InstanceEnv(instance_id, record["repo"], record["base_commit"], env, project)

    def repo_tar(self, repo: str) -> Path:
        path = self.root / "repos" / f"{repo.replace('/', '__')}.git.tar"
        if not path.is_file():
            raise NotFoundError(
                f"the repository {repo} is not in {self.root / 'repos'} ({path.name})",
                "add a bare repository holding the base commits as repos/<owner>__<name>.git.tar",
            )
        return path
