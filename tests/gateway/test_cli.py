"""`dgm gateway` standalone: prints where it listens, serves, and on Ctrl-C stops cleanly
and prints the totals."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time

import pytest

from .helpers import openai_client

RULES = {
    "rules": [],
    "default": {"content": "hi", "usage": {"input_tokens": 3000, "output_tokens": 400}},
}


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "dgm", "gateway", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_until(process: subprocess.Popen, pattern: str, timeout: float = 60) -> re.Match:
    deadline = time.monotonic() + timeout
    seen = ""
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        seen += line
        if found := re.search(pattern, seen):
            return found
        if not line and process.poll() is not None:
            break
    process.kill()
    raise AssertionError(f"no {pattern!r} in output: {seen}{process.stderr.read()}")


def test_standalone_gateway_serves_budgets_and_prints_totals(tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(RULES))
    process = start(
        "--llm", f"scripted/@{rules}", "--budget-usd", "1", "--log", str(tmp_path / "logs")
    )
    try:
        found = read_until(process, r"OPENAI_BASE_URL=(\S+) OPENAI_API_KEY=(\S+)")
        client = openai_client(found[1], found[2])
        answer = client.chat.completions.create(
            model="x", messages=[{"role": "user", "content": "hello"}]
        )
        assert answer.choices[0].message.content == "hi"
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    totals = next(line for line in out.splitlines() if line.strip().startswith("│ total"))
    assert re.search(r"│\s+1\s+│\s+0\s+│\s+3000\s+│\s+0\s+│\s+400\s+│", totals), totals
    assert "3000 in / 400 out" in err  # the per-call line
    assert (
        len((tmp_path / "logs" / "standalone" / "llm-standalone.jsonl").read_text().splitlines())
        == 1
    )


def test_standalone_gateway_on_a_socket(short_dir):
    process = start("--llm", "scripted/echo", "--socket", str(short_dir / "gw.sock"))
    try:
        read_until(process, r"listening on unix socket")
        client = openai_client(str(short_dir / "gw.sock"), "")
        answer = client.chat.completions.create(
            model="x", messages=[{"role": "user", "content": "ping"}]
        )
        assert answer.choices[0].message.content == "echo: ping"
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert not (short_dir / "gw.sock").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--llm", "gpt-4"], "unknown model string"),
        (["--llm", "scripted/echo", "--socket", "/tmp/x.sock", "--port", "1"], "not both"),
    ],
)
def test_bad_arguments_are_one_line_errors(args, message):
    process = start(*args)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert message in err and "Traceback" not in err
