"""Build step that puts dgm's non-Python assets into the wheel (metadata: pyproject.toml).

`seed_agent/`, `containers/` and `eval/` live at the repository root, where an editable
install finds them; a wheel carries copies under `dgm/_assets/` (see dgm/paths.py).
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
ASSET_TREES = ("seed_agent", "containers", "eval")  # mirrors dgm.paths.ASSET_TREES
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".ruff_cache")


class BuildPyWithAssets(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the trees in place
        target = Path(self.build_lib) / "dgm" / "_assets"
        for name in ASSET_TREES:
            if (target / name).exists():
                shutil.rmtree(target / name)
            shutil.copytree(ROOT / name, target / name, ignore=SKIP)


setup(cmdclass={"build_py": BuildPyWithAssets})
