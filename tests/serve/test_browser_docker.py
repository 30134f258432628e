"""`dgm serve` in real headless Chromium over a real dry run (real Docker, the scripted
model): the tree grows without a reload, a click opens a node's diff and a trajectory, a
ban then a stop from the page take effect in the run and show in its events, a request
without the token is refused, and an agent-written `<script>` shows as text.

One dry run for the whole module: the tests run in order against it (the last stops it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import Chromium, chromium_path

from dgm.serve.runs import is_run_dir
from dgm.store import Run, best_node
from dgm.store.steering import requests
from tests.conftest import POLYGLOT_DIR
from tests.needs import missing
from tests.serve.helpers import SCRIPT_DIFF, make_small_run, start_server

pytestmark = [
    pytest.mark.docker,
    pytest.mark.needs("chromium", chromium_path() is None and "chromium not installed"),
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


class Page(Chromium):
    def click_at(self, x: float, y: float) -> None:
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def evaluate_async(self, expression: str) -> object:
        """The value a promise resolves to (a fetch from the page)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)  # fmt: skip
        return result["result"].get("value")

    def wait(self, expression: str, timeout: float = 60.0, what: str = "") -> object:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        seen = self.evaluate(
            "JSON.stringify({shown: window.dgmShown, run: document.getElementById"
            "('run').value, toast: document.getElementById('toast').textContent})"
        )
        raise AssertionError(f"timed out waiting for {what or expression}; the page: {seen}")


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """A dry run going on in the background, a server over it and a small run with an
    agent-written <script> diff, and a browser on the page."""
    if not POLYGLOT_DIR.is_dir():
        missing("polyglot", f"polyglot benchmark checkout not found at {POLYGLOT_DIR}")
    runs = tmp_path_factory.mktemp("serve")
    run_dir = runs / "live"
    env = {**os.environ, "DGM_POLYGLOT_DIR": str(POLYGLOT_DIR)}
    log = open(runs / "dry-run.log", "w")  # noqa: SIM115 (the run writes it until it stops)
    proc = subprocess.Popen(
        [sys.executable, "-m", "dgm", "run", str(run_dir), "--dry-run", "--strategy", "hgm",
         "--workers", "1", "--max-evals", "200"],
        stdout=log, stderr=subprocess.STDOUT, env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not is_run_dir(run_dir):  # (else the page opens on the small run instead)
        assert proc.poll() is None, (runs / "dry-run.log").read_text()
        assert time.monotonic() < deadline, "the dry run did not create its run folder"
        time.sleep(0.2)
    small = make_small_run(tmp_path_factory.mktemp("small"))  # the agent-written <script>
    stops: list = []
    served = start_server([run_dir, small], stops)
    page = Page(width=1500, height=1000)
    page.open(f"{served.url}/#run=live&token={served.token}")
    try:
        yield {"proc": proc, "run_dir": run_dir, "served": served, "page": page, "runs": runs}
    finally:
        page.close()
        for stop in stops:
            stop()
        if proc.poll() is None:
            proc.terminate()
            proc.wait(120)
        log.close()


def test_tree_grows_without_a_reload(live) -> None:
    page: Page = live["page"]
    page.evaluate("window.__sameDocument = true")
    first = page.evaluate("window.dgmShown.nodes")
    page.wait(f"window.dgmShown && window.dgmShown.run === 'live'"
              f" && window.dgmShown.nodes > {max(first, 1)}", 300,
              "a child node to appear on the page")  # fmt: skip
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
    assert "live" in page.evaluate("document.getElementById('live').textContent")


def test_a_click_opens_a_node_diff_and_a_trajectory(live) -> None:
    page: Page = live["page"]
    x, y = page.evaluate("dgmTree.screenPos(1)")
    page.click_at(x, y)
    page.wait("document.getElementById('node').dataset.node === '1'", 10, "node 1's page")
    diff = page.evaluate("document.getElementById('diff').textContent")
    assert diff.startswith("diff --git") and "search_files" in diff
    page.evaluate("dgmTree.centerOn(0)")  # the seed: its evaluations come first
    page.wait("document.getElementById('node').dataset.node === '0'", 10, "the seed's page")
    page.wait("!!document.querySelector('button.traj')", 240, "an evaluation with a trajectory")
    page.click("button.traj")
    page.wait("!document.getElementById('trajectory').hidden", 10, "the trajectory panel")
    text = page.evaluate("document.getElementById('trajectory').textContent")
    assert "Step 1" in text and "Test output (judge)" in text
    page.screenshot(ARTIFACTS / "serve-node.png")


def test_a_request_without_the_token_is_refused(live) -> None:
    page: Page = live["page"]
    status = page.evaluate_async(
        "(async () => (await fetch('/api/runs/live/steer', {method: 'POST',"
        " headers: {'Content-Type': 'application/json'},"
        " body: JSON.stringify({action: 'stop'})})).status)()",
    )
    assert status == 403
    with Run.open(live["run_dir"]) as run:
        assert requests(run.db) == []


def test_an_agent_written_script_shows_as_text(live) -> None:
    page: Page = live["page"]
    page.evaluate("document.getElementById('run').value = 'alpha';"
                  " document.getElementById('run').dispatchEvent(new Event('change'))")  # fmt: skip
    page.wait("window.dgmShown.nodes === 3 && dgmTree.centerOn(2)", 10, "the small run")
    page.wait("document.getElementById('node').dataset.node === '2'", 10, "node 2's page")
    assert SCRIPT_DIFF in page.evaluate("document.getElementById('diff').textContent")
    assert (
        page.evaluate("document.querySelectorAll('#node script, #node img, #node b').length") == 0
    )
    assert page.evaluate("document.title") == "dgm serve"
    assert page.evaluate("document.getElementById('origin').textContent") == "<b>bold</b> origin"
    page.click('nav button[data-tab="compare"]')  # both runs' curves on one chart
    assert page.wait(
        "window.dgmCompared && window.dgmCompared.length === 2 && window.dgmCompared",
        30,
        "two runs on the compare chart",
    ) == ["live (hgm)", "alpha (hgm)"]
    page.click('nav button[data-tab="tree"]')
    page.evaluate("document.getElementById('run').value = 'live';"
                  " document.getElementById('run').dispatchEvent(new Event('change'))")  # fmt: skip
    page.wait("window.dgmShown.run === 'live' && window.dgmShown.nodes > 1", 30,
              "the live run again")  # fmt: skip


def test_ban_then_stop_from_the_page_take_effect_in_the_run(live) -> None:
    page: Page = live["page"]
    proc, run_dir = live["proc"], live["run_dir"]
    page.wait("window.dgmShown.run === 'live' && dgmTree.centerOn(1)", 30, "node 1 in the tree")
    page.wait("document.getElementById('node').dataset.node === '1'", 30, "node 1's page")
    page.click("#ban")
    with Run.open(run_dir) as run:
        deadline = time.monotonic() + 240
        while [r.state for r in requests(run.db)] != ["applied"]:
            assert proc.poll() is None, "the run ended before it applied the ban"
            assert time.monotonic() < deadline, "the loop did not apply the ban"
            time.sleep(0.3)
        banned_at = requests(run.db)[0].applied_at
    page.click('nav button[data-tab="progress"]')
    page.wait("document.getElementById('events').textContent.includes('steered')", 10,
              "the ban in the page's events")  # fmt: skip
    page.evaluate("window.confirm = () => true")
    page.click("#stop")
    assert proc.wait(300) == 0
    with Run.open(run_dir) as run:
        steered = run.events(limit=None, kinds=["steered"])
        assert [(e["action"], e["state"]) for e in steered] == [("ban", "applied"),
                                                                ("stop", "applied")]  # fmt: skip
        assert all(e["who"].startswith("web 127.0.0.1") for e in steered)
        stopped = run.events(limit=None, kinds=["run_stopped"])[-1]
        assert stopped["reason"].startswith("stop requested by web 127.0.0.1")
        later = [j for j in run.jobs() if j.kind == "expand" and j.created_at > banned_at]
        assert all(int(j.inputs["parent"]) != 1 for j in later)
        assert best_node(run) != 1
    page.wait("document.getElementById('events').textContent.includes('run_stopped')", 10,
              "the stop in the page's events")  # fmt: skip
    page.screenshot(ARTIFACTS / "serve-progress.png")
    print(json.dumps({"steered": steered}, default=str)[:2000])
