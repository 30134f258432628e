"""The HTML report in headless Chromium: it loads, a click on a node shows its details.

Screenshots go to test-artifacts/ (git-ignored) for a human to look at.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser import Chromium, chromium_path
from conftest import ARTIFACTS
from runs import PLAN

from dgm.report.html import write_report
from dgm.store import Run

pytestmark = pytest.mark.needs("chromium", chromium_path() is None and "chromium not installed")

LOAD_LIMIT_S = 3.0


@pytest.fixture(scope="module")
def browser():
    with Chromium() as chromium:
        yield chromium


def _details(browser: Chromium) -> tuple[str, str]:
    return (
        browser.evaluate("document.getElementById('details').dataset.node"),
        browser.evaluate("document.getElementById('details').textContent"),
    )


def test_small_run_click_node_shows_origin_diff_tasks_and_cost(
    browser: Chromium, small_run_dir: Path, tmp_path: Path
) -> None:
    page = write_report(small_run_dir, tmp_path / "report.html")
    browser.open(page.as_uri())
    assert _details(browser)[0] == "3"  # the best node is shown first
    browser.click('#tree circle[data-id="1"]')
    node, text = _details(browser)
    assert node == "1"
    assert text.startswith("Node 1lineage")
    assert PLAN[1][1] in text  # origin
    assert "Diff against node 0" in text and "Before you call finish, run the tests" in text
    assert "Tasks: 2 of 3 solved" in text
    assert "self_improve" in text and "diagnose" in text
    # What the expansion that made it cost: two calls, 7,000 tokens in, 600 out.
    assert "expansion: $0.0300, 2 calls; 7000 in (0 cached, 0 cache write), 600 out" in text
    summary = browser.evaluate("document.getElementById('summary').textContent")
    assert "expansions $0.12 ($0.0300 each)" in summary and "per additional task solved" in summary
    # The diff is coloured: added lines and code tokens get their own classes.
    assert browser.evaluate("document.querySelectorAll('#details .d-add').length") >= 2
    # Links to the trajectory and test output resolve to real files beside the run.
    hrefs = browser.evaluate("[...document.querySelectorAll('#details a[href]')].map(a => a.href)")
    trajectories = [h for h in hrefs if h.endswith("/trajectory.json")]
    assert len(trajectories) == 3
    assert all(Path(h.removeprefix("file://")).is_file() for h in hrefs)
    browser.screenshot(ARTIFACTS / "report-small.png")


def test_thousand_node_report_loads_fast_and_clicks(
    browser: Chromium, big_run_dir: Path, tmp_path: Path
) -> None:
    page = write_report(big_run_dir, tmp_path / "report.html")
    seconds = browser.open(page.as_uri())
    assert seconds < LOAD_LIMIT_S, f"1,000-node report took {seconds:.2f} s to load"
    assert browser.evaluate("document.querySelectorAll('#tree circle.n').length") == 1000
    with Run.open(big_run_dir) as run:
        deepest = max(run.nodes(), key=lambda n: (n.depth, n.id))
    browser.click(f'#tree circle[data-id="{deepest.id}"]')
    node, text = _details(browser)
    assert node == str(deepest.id)
    assert deepest.origin in text
    assert f"Diff against node {deepest.parent_id}" in text
    # The heatmap was drawn: one row per evaluated node.
    assert browser.evaluate("document.getElementById('heat').height") > 500
    browser.screenshot(ARTIFACTS / "report-1000.png")


def test_a_tampered_node_is_named_loudly_and_never_best(browser: Chromium, tmp_path: Path) -> None:
    from runs import make_small_run

    from dgm.store import Evaluation

    with make_small_run(tmp_path / "run") as run:
        run.record_evaluation(Evaluation(
            node_id=3, task_id="python__extra", benchmark="polyglot", resolved=True,
            tampered=True, details={"tamper_evidence": "report: canary test_c_7 missing"},
        ))  # fmt: skip
    page = write_report(tmp_path / "run", tmp_path / "report.html")
    browser.open(page.as_uri())
    summary = browser.evaluate("document.getElementById('summary').textContent")
    assert "TAMPERED: 1 evaluation(s) on node(s) 3 (never best or exported)" in summary
    shown_first = browser.evaluate("document.getElementById('details').dataset.node")
    assert shown_first != "3"  # node 3 was best before it was caught
    browser.click('#tree circle[data-id="3"]')
    node, text = _details(browser)
    assert node == "3" and "TAMPERED: the judge caught this agent's patch" in text
    assert "python__extra: report: canary test_c_7 missing" in text and "★ best" not in text
    assert browser.evaluate("document.querySelectorAll('#tree circle.tampered').length") == 1
