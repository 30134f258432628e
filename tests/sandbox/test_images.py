"""Images are tagged by recipe hash: reused when unchanged, rebuilt when changed."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from dgm.errors import NotFoundError
from dgm.sandbox import images

REPO_CONTAINERS = Path(__file__).resolve().parents[2] / "containers"


def test_recipe_change_changes_the_tag_of_the_image_and_its_children(tmp_path, monkeypatch):
    before = {name: images.recipe_hash(name) for name in images.IMAGE_NAMES}
    shutil.copytree(REPO_CONTAINERS, tmp_path / "containers")
    monkeypatch.setenv("DGM_CONTAINERS_DIR", str(tmp_path / "containers"))
    assert {name: images.recipe_hash(name) for name in images.IMAGE_NAMES} == before
    dockerfile = tmp_path / "containers" / "runtime" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "\nRUN true\n")
    after = {name: images.recipe_hash(name) for name in images.IMAGE_NAMES}
    assert after["base"] == before["base"]
    assert after["runtime"] != before["runtime"]
    assert after["polyglot"] != before["polyglot"]  # built on runtime: rebuilt too


def test_unknown_image_name_lists_the_known_ones() -> None:
    with pytest.raises(NotFoundError, match="runtime, polyglot"):
        images.tag("pythonn")


@pytest.mark.docker
def test_missing_image_names_the_build_command(tmp_path, monkeypatch) -> None:
    shutil.copytree(REPO_CONTAINERS, tmp_path / "containers")
    monkeypatch.setenv("DGM_CONTAINERS_DIR", str(tmp_path / "containers"))
    dockerfile = tmp_path / "containers" / "runtime" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "\n# changed, never built\n")
    with pytest.raises(NotFoundError) as info:
        images.resolve("runtime")
    assert info.value.hint == "run `dgm sandbox build runtime`"


@pytest.mark.docker
def test_second_build_reuses_the_image(runtime_image: str) -> None:
    lines: list[str] = []
    started = time.monotonic()
    assert images.build("runtime", log=lines.append) == runtime_image
    assert time.monotonic() - started < 5
    assert lines == [f"runtime: {runtime_image} is up to date"]
    assert images.resolve("runtime") == runtime_image
