import csv

import pytest
from typer.testing import CliRunner

from dgm.commands.app import app
from dgm.errors import ConfigError

runner = CliRunner()


def simulate(*args: str):
    return runner.invoke(app, ["simulate", *args])


def test_simulate_prints_a_table_and_writes_csv_and_plot(tmp_path):
    out_csv, out_png = tmp_path / "runs.csv", tmp_path / "plot.png"
    result = simulate(
        "--strategies", "hgm,dgm", "--landscape", "aligned", "--budget", "120",
        "--workers", "4", "--seeds", "3", "--target", "0.35",
        "--csv", str(out_csv), "--plot", str(out_png),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "hgm" in result.output and "dgm" in result.output and "reached 0.35" in result.output
    rows = list(csv.DictReader(out_csv.open()))
    assert [(r["strategy"], r["seed"]) for r in rows] == [
        (s, str(i)) for s in ("hgm", "dgm") for i in range(3)
    ]
    assert all(float(r["evals_used"]) <= 120 for r in rows)
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_custom_landscape_and_strategy_settings_from_a_config_file(tmp_path):
    config = tmp_path / "sim.toml"
    config.write_text(
        '[landscape]\nbase = "flat"\nseed_rate = 0.2\ntarget = 0.3\n'
        "[strategy.dgm]\nchildren_per_generation = 4\n"
    )
    result = simulate(
        "--strategies", "dgm", "--seeds", "2", "--budget", "60", "--config", str(config)
    )
    assert result.exit_code == 0, result.output
    # rich wraps a long path and indents the rest, so compare with all whitespace removed
    assert str(config) in "".join(result.output.split())
    assert "reached 0.30" in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--strategies", "hgm,mcts"], "unknown strategy mcts"),
        (["--landscape", "bumpy"], "unknown landscape 'bumpy'"),
        (["--budget", "0"], "must be positive"),
        (["--target", "1.5"], "--target must be between 0 and 1"),
        (["--config", "/nonexistent.toml"], "does not exist"),
    ],
)
def test_bad_input_names_the_problem(args, message):
    result = simulate("--seeds", "1", "--budget", "20", *args)  # the last of a flag wins
    assert isinstance(result.exception, ConfigError)
    assert message in str(result.exception)


def test_bad_config_fields_are_named(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text("[landscape]\nseed_rat = 0.2\n")
    result = simulate("--config", str(config), "--seeds", "1")
    assert "unknown field `seed_rat`" in str(result.exception)
    config.write_text("[strategy.hgm]\nalpha = 3\n")
    result = simulate("--config", str(config), "--seeds", "1")
    assert "hgm.alpha" in str(result.exception)
