"""The images a list of tasks needs: which are missing, and their tags pinned for a session."""

from __future__ import annotations

from dataclasses import replace

from dgm.benchmarks.task import Task
from dgm.errors import NotFoundError


def missing_images(tasks: list[Task]) -> list[str]:
    """Images the tasks need that are neither built nor present, checked before any
    agent runs (so no LLM money is spent on a setup that cannot judge)."""
    from dgm.sandbox import images

    missing = []
    for name in sorted({t.image for t in tasks} | {t.judge_image for t in tasks}):
        try:
            images.resolve(name)
        except NotFoundError as exc:
            missing.append(f"{name}: {exc.hint or exc.message}")
    return missing


def pin_images(tasks: list[Task]) -> list[Task]:
    """Tasks with image names resolved to full tags, so that a whole evaluation uses the
    same images even if a recipe changes while it runs."""
    from dgm.sandbox import images

    tags = {n: images.resolve(n) for n in {t.image for t in tasks} | {t.judge_image for t in tasks}}
    return [replace(t, image=tags[t.image], judge_image=tags[t.judge_image]) for t in tasks]
