"""`--price INPUT,OUTPUT` for `dgm gateway` and `dgm run`: a self-hosted model without
a run.toml, and `0,0` for a free local server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from dgm.config import Price, RunConfig, parse_price
from dgm.errors import ConfigError

DGM = str(Path(sys.executable).parent / "dgm")
LOCAL = "openai-compatible/qwen2.5-coder@http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("text", "price"), [("3,15", (3, 15)), ("0,0", (0, 0)), (" 0.1, 0.4 ", (0.1, 0.4))]
)
def test_parse_price(text, price) -> None:
    assert (parse_price(text).input, parse_price(text).output) == price


@pytest.mark.parametrize("text", ["3", "3,15,1", "-1,2", "a,b", "nan,1", "inf,1", ""])
def test_parse_price_refuses_what_is_not_two_prices(text) -> None:
    with pytest.raises(ConfigError, match="is not two prices"):
        parse_price(text)


def test_run_price_is_kept_in_the_run_config_for_resume() -> None:
    cfg = (
        RunConfig().with_overrides({"llm.model": LOCAL}).with_price(LOCAL, Price(input=0, output=0))
    )
    again = RunConfig.from_dict(tomllib.loads(cfg.to_toml()))
    assert again.llm.prices[LOCAL] == Price(input=0, output=0)
    assert RunConfig().with_price(LOCAL, None) == RunConfig()


def _gateway(*extra: str) -> subprocess.Popen:
    return subprocess.Popen([DGM, "gateway", "--llm", LOCAL, "--port", "0", *extra], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/",
                            env={**os.environ, "NO_COLOR": "1"})  # fmt: skip


def test_gateway_without_a_price_says_to_pass_price() -> None:
    proc = _gateway()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "no price known" in err and "pass --price INPUT,OUTPUT" in err and "--price 0,0" in err


def test_gateway_serves_a_free_local_model_with_price_0_0() -> None:
    proc = _gateway("--price", "0,0")
    try:
        first = proc.stdout.readline()
        assert first.startswith("listening on http://127.0.0.1:"), proc.stderr.read()
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "gateway usage" in out


def test_run_takes_the_price_of_a_self_hosted_model(tmp_path, polyglot_dir) -> None:
    """Without --price the run refuses before anything starts; with it, the checks move
    on to the next thing (here a Docker engine that is not there)."""
    env = {
        **os.environ,
        "DGM_POLYGLOT_DIR": str(polyglot_dir),
        "DOCKER_HOST": "unix:///nonexistent",
    }
    base = [DGM, "run", str(tmp_path / "r"), "--llm", LOCAL, "--subset", "python"]
    unpriced = subprocess.run(base, capture_output=True, text=True, env=env, timeout=120)
    assert unpriced.returncode == 1 and "pass --price INPUT,OUTPUT" in unpriced.stderr
    priced = subprocess.run([*base, "--price", "0,0"], capture_output=True, text=True, env=env,
                            timeout=120)  # fmt: skip
    assert priced.returncode == 1 and "Docker is not available" in priced.stderr, priced.stderr
    assert "price" not in priced.stderr and not (tmp_path / "r").exists()


def test_eval_gateway_takes_the_price_of_a_self_hosted_model(tmp_path) -> None:
    """`dgm eval --price`: the agent's gateway starts for a model the price table lacks."""
    from dgm.errors import DgmError
    from dgm.evaluation.prepare import start_gateway

    with pytest.raises(DgmError, match="pass --price INPUT,OUTPUT"):
        start_gateway(LOCAL, tmp_path, {}.get)
    gateway = start_gateway(LOCAL, tmp_path, {}.get, parse_price("0,0"))
    gateway.stop()
