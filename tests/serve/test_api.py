"""`dgm serve`'s HTTP API without a browser: what it shows, what it refuses."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from dgm.errors import RunDirError
from dgm.serve.runs import find_runs
from dgm.store import Run
from dgm.store.steering import requests
from tests.serve.helpers import SCRIPT_DIFF


def call(url: str, body: dict | None = None, headers: dict | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers=headers or {},
                                 method="GET" if body is None else "POST")  # fmt: skip
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as err:
        text = err.read()
        try:
            return err.code, json.loads(text)
        except ValueError:
            return err.code, {"text": text.decode()}


def test_runs_tree_and_node_pages(serve, small_run: Path) -> None:
    s = serve([small_run.parent])  # a folder holding runs
    status, runs = call(f"{s.url}/api/runs")
    assert status == 200 and [r["name"] for r in runs["runs"]] == ["alpha"]
    _, tree = call(f"{s.url}/api/runs/alpha/tree")
    assert tree["id"] == [0, 1, 2] and tree["parent"] == [None, 0, 1]
    assert tree["passed"][:2] == [1, 2] and tree["best"] == 1
    _, node = call(f"{s.url}/api/runs/alpha/nodes/2")
    assert node["origin"] == "<b>bold</b> origin" and SCRIPT_DIFF in node["diff"]
    assert node["diffBase"] == 1
    _, against_seed = call(f"{s.url}/api/runs/alpha/nodes/2?against=0")
    assert "-print('hi')" in against_seed["diff"] and against_seed["diffBase"] == 0
    _, seed = call(f"{s.url}/api/runs/alpha/nodes/0")
    assert [(r["task"], r["resolved"]) for r in seed["results"]] == [("t1", True), ("t2", False)]
    status, missing = call(f"{s.url}/api/runs/alpha/nodes/99")
    assert status == 400 and "node 99 does not exist" in missing["error"]


def test_steering_needs_the_token_in_a_header(serve, small_run: Path) -> None:
    s = serve([small_run])
    url = f"{s.url}/api/runs/alpha/steer"
    ban = {"action": "ban", "args": {"node": 1}}
    status, body = call(url, ban)
    assert status == 403 and "X-DGM-Token" in body["error"]
    assert call(url, ban, {"X-DGM-Token": "wrong"})[0] == 403
    assert call(url, ban, {"Cookie": f"X-DGM-Token={s.token}"})[0] == 403
    with Run.open(small_run) as run:
        assert requests(run.db) == []  # nothing was recorded
    status, row = call(url, ban, {"X-DGM-Token": s.token})
    assert status == 200 and row["action"] == "ban" and row["state"] == "pending"
    assert row["who"].startswith("web 127.0.0.1")
    status, bad = call(url, {"action": "explode"}, {"X-DGM-Token": s.token})
    assert status == 400 and "unknown steering action 'explode'" in bad["error"]
    status, bad = call(url, {"action": "ban", "args": {"node": 42}}, {"X-DGM-Token": s.token})
    assert status == 400 and "node 42 does not exist" in bad["error"]
    with Run.open(small_run) as run:
        assert [(r.action, r.args) for r in requests(run.db)] == [("ban", {"node": 1})]


def test_no_cors_no_foreign_host_only_bundled_files(serve, small_run: Path) -> None:
    s = serve([small_run])
    req = urllib.request.Request(f"{s.url}/api/runs", headers={"Origin": "http://evil.example"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert not any(h.lower().startswith("access-control") for h in resp.headers)
        assert "script-src 'self'" in resp.headers["Content-Security-Policy"]
    req = urllib.request.Request(f"{s.url}/api/runs", headers={"Host": "evil.example:80"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10)
    assert err.value.code == 421  # DNS rebinding: a foreign name for this address
    for path in ("/static/..%2frun.sqlite", "/static/app.py", "/static/index.html"):
        assert call(s.url + path)[0] == 404
    assert call(f"{s.url}/api/runs/other/tree")[0] == 404


def test_page_scripts_never_build_html_from_strings() -> None:
    static = Path(__file__).resolve().parents[2] / "dgm" / "serve" / "static"
    for script in static.glob("*.js"):
        text = script.read_text()
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
            assert sink not in text, f"{script.name} uses {sink}"


def test_stream_announces_a_new_node_quickly(serve, small_run: Path) -> None:
    s = serve([small_run])
    with urllib.request.urlopen(f"{s.url}/api/stream", timeout=10) as stream:
        first = _next_change(stream)
        with Run.open(small_run) as run:
            started = time.perf_counter()
            run.add_node(0, diff="", origin="another")
        second = _next_change(stream)
        assert second["token"] != first["token"] and second["run"] == "alpha"
        assert time.perf_counter() - started < 1.0


def _next_change(stream) -> dict:
    for raw in stream:
        line = raw.decode().strip()
        if line.startswith("data: "):
            return json.loads(line[6:])
    raise AssertionError("the stream ended")


def test_find_runs_names_the_problem(tmp_path: Path, small_run: Path) -> None:
    assert find_runs([small_run, small_run.parent]) == {"alpha": small_run.resolve()}
    assert find_runs([tmp_path / "seed"]) == {}  # no run yet: watched, runs appear later
    with pytest.raises(RunDirError, match="is not a folder"):
        find_runs([tmp_path / "seed" / "agent.py"])


def _dgm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dgm", *args], capture_output=True, text=True,
                          timeout=120)  # fmt: skip


def test_steer_command_records_the_same_requests(small_run: Path, tmp_path: Path) -> None:
    empty = _dgm("steer", str(small_run), "list")
    assert empty.returncode == 0 and "no steering requests yet" in empty.stdout, empty.stderr
    ban = _dgm("steer", str(small_run), "ban", "1")
    assert ban.returncode == 0 and "asked: #1 ban {'node': 1}" in ban.stdout, ban.stderr
    assert _dgm("steer", str(small_run), "eval-limit", "30").returncode == 0
    bad = _dgm("steer", str(small_run), "ban", "9")
    assert bad.returncode == 1 and "node 9 does not exist in this run" in bad.stderr
    bad = _dgm("steer", str(small_run), "budget", "lots")
    assert bad.returncode == 1 and "usd must be a number, not 'lots'" in bad.stderr
    listed = _dgm("steer", str(small_run), "list").stdout
    assert "#1 ban {'node': 1} by cli (" in listed and "#2 eval_limit {'max_evals': 30}" in listed
    with Run.open(small_run) as run:
        assert [(r.action, r.who.startswith("cli (")) for r in requests(run.db)] == [
            ("ban", True), ("eval_limit", True)]  # fmt: skip
    forked = _dgm("steer", str(small_run), "fork", "1", "--to", str(tmp_path / "from-1"))
    assert forked.returncode == 0, forked.stderr
    with Run.open(tmp_path / "from-1") as new, Run.open(small_run) as old:
        assert new.archive.files(new.node(0).commit) == old.archive.files(old.node(1).commit)
        assert new.read_file(0, "agent.py") == old.read_file(1, "agent.py")
        assert new.events(kinds=["forked"])[0]["node"] == 1


def test_progress_curves_are_thinned_keeping_the_last_point(small_run: Path, monkeypatch) -> None:
    from dgm.serve import views
    from dgm.serve.runs import RunView

    run = RunView("alpha", small_run).fresh()
    full = views.curves(run)["progress"]
    assert full["evals"] == [1, 2, 3, 4]
    monkeypatch.setattr(views, "CURVE_POINTS", 3)
    thin = views.curves(run)["progress"]
    assert thin["evals"] == [1, 3, 4] and thin["best"][-1] == full["best"][-1]
    page = views.progress_page(run)
    assert page["progress"]["evals"] == [1, 3, 4] and page["events"][0]["kind"] == "run_created"


def test_a_new_run_from_a_node_appears_beside_the_source(serve, small_run: Path) -> None:
    s = serve([small_run.parent])
    url = f"{s.url}/api/runs/alpha/fork"
    assert call(url, {"node": 1})[0] == 403  # no token
    status, out = call(url, {"node": 1}, {"X-DGM-Token": s.token})
    assert status == 200 and out["run"] == "alpha-from-1" and out["pid"] is None
    assert out["start"] == f"dgm resume {small_run.parent / 'alpha-from-1'}"
    names = [r["name"] for r in call(f"{s.url}/api/runs")[1]["runs"]]
    assert names == ["alpha", "alpha-from-1"]
    _, seed = call(f"{s.url}/api/runs/alpha-from-1/nodes/0")
    _, source = call(f"{s.url}/api/runs/alpha/nodes/1")
    assert seed["commit"] != source["commit"] and seed["parent"] is None
    with Run.open(small_run.parent / "alpha-from-1") as new, Run.open(small_run) as old:
        assert new.read_file(0, "agent.py") == old.read_file(1, "agent.py")
        assert new.events(kinds=["forked"])[0]["who"].startswith("web 127.0.0.1")
