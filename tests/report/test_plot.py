"""`dgm plot`: the tree and progress charts as files."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dgm.commands.app import app
from dgm.errors import DgmError
from dgm.report.plot import write_plots

pytestmark = pytest.mark.needs("matplotlib", find_spec("matplotlib") is None and "no matplotlib")


def test_plot_writes_png_and_svg(small_run_dir: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["plot", str(small_run_dir), "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for stem in ("tree", "progress", "spend_by_role"):
        assert (tmp_path / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"
        assert (tmp_path / f"{stem}.svg").stat().st_size > 1000
    assert "best: node 3 (3/3)" in (tmp_path / "tree.svg").read_text()  # the annotation


def test_plot_rejects_unknown_format(small_run_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(DgmError, match="unknown plot format gif"):
        write_plots(small_run_dir, tmp_path, ["png", "gif"])
