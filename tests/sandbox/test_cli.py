"""`dgm sandbox run` and `dgm sandbox doctor` as a user calls them."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from dgm.commands.app import app

runner = CliRunner()


@pytest.mark.docker
def test_run_prints_output_and_returns_the_exit_code(runtime_image, tmp_path) -> None:
    (tmp_path / "hello.txt").write_text("from the host\n")
    result = runner.invoke(
        app,
        [
            "sandbox",
            "run",
            "--mount",
            f"{tmp_path}:/data:ro",
            "--",
            "sh",
            "-c",
            "cat /data/hello.txt; whoami; exit 3",
        ],
    )
    assert result.exit_code == 3
    assert "from the host\nagent\n" in result.output
    assert "exit code 3" in result.output


@pytest.mark.docker
def test_doctor_reports_images_and_backends(runtime_image) -> None:
    result = runner.invoke(app, ["sandbox", "doctor"])
    assert f"image runtime: {runtime_image} present" in result.output
    assert "local backend: WEAKER than docker" in result.output


def test_bad_mount_names_the_fix() -> None:
    result = runner.invoke(app, ["sandbox", "run", "--mount", "nocolon", "--", "true"])
    assert result.exit_code != 0
    assert "SRC:DST" in str(result.exception) or "SRC:DST" in result.output
