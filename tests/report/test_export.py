"""`dgm export`: the best agent out of dgm as a folder, a git bundle or a Docker image."""

from __future__ import annotations

import filecmp
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from runs import BEST_NODE, PLAN
from seed_fake_gateway import FakeGateway, tool_call
from typer.testing import CliRunner

from dgm.commands.app import app
from dgm.errors import DgmError
from dgm.report.export import export
from dgm.report.export_readme import fill, solve_command
from dgm.store import Run
from tests.needs import image_or_missing
from tests.needs import missing as missing_need


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, result.output
    return result.output


def _same_tree(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.diff_files:
        return False
    return all(_same_tree(a / d, b / d) for d in cmp.common_dirs)


def test_export_best_dir(small_run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "agent"
    assert f"node {BEST_NODE} exported" in _cli(
        "export", str(small_run_dir), "best", "-o", str(out)
    )
    with Run.open(small_run_dir) as run:
        run.checkout(BEST_NODE, tmp_path / "inside")
    (tmp_path / "inside" / "EXPORT.md").write_text((out / "EXPORT.md").read_text())
    (tmp_path / "inside" / "export.json").write_text((out / "export.json").read_text())
    assert _same_tree(out, tmp_path / "inside")  # the codebase, plus the two files
    manifest = json.loads((out / "export.json").read_text())
    assert [s["node"] for s in manifest["lineage"]] == [0, 1, 3]
    assert [(s["passed"], s["total"]) for s in manifest["lineage"]] == [(1, 3), (2, 3), (3, 3)]
    readme = (out / "EXPORT.md").read_text()
    for node in (1, 3):
        assert PLAN[node][1] in readme
    assert "**3/3**" in readme and "(1/3, $" in readme
    assert "solve: `scripted/demo`" in readme
    assert "DGM_LLM_URL" in readme and "python3 -B ./run.py solve" in readme


def test_export_refuses_bad_input(small_run_dir: Path, tmp_path: Path, run_factory) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    with pytest.raises(DgmError, match="not empty"):
        export(small_run_dir, "best", tmp_path / "full", "dir")
    with pytest.raises(DgmError, match="unknown export format 'zip'"):
        export(small_run_dir, "best", tmp_path / "z", "zip")
    with pytest.raises(DgmError, match="node 42 does not exist"):
        export(small_run_dir, "42", tmp_path / "z", "dir")
    unevaluated = run_factory()
    with pytest.raises(DgmError, match="no evaluated node"):
        export(unevaluated.path, "best", tmp_path / "z", "dir")


def test_bundle_history_is_the_lineage(small_run_dir: Path, tmp_path: Path) -> None:
    _cli("export", str(small_run_dir), "best", "-o", str(tmp_path / "b"), "--format", "bundle")
    bundle = tmp_path / "b" / f"node-{BEST_NODE}.bundle"
    subprocess.run(["git", "clone", "-q", str(bundle), str(tmp_path / "clone")], check=True)
    log = subprocess.run(
        ["git", "-C", str(tmp_path / "clone"), "log", "--format=%H%x00%D%x00%B%x01", "--tags"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    entries = [e.strip("\n").split("\x00") for e in log.split("\x01") if e.strip()]
    with Run.open(small_run_dir) as run:
        chain = [run.node(n) for n in (3, 1, 0)]  # newest first, as git log prints
    assert [sha for sha, _, _ in entries] == [n.commit for n in chain]
    assert [msg.strip() for _, _, msg in entries] == [n.origin for n in chain]
    assert "tag: node-3" in entries[0][1] and "tag: node-0" in entries[2][1]
    # The clone checks out the node's codebase.
    assert "Check edge cases" in (tmp_path / "clone" / "prompts" / "system.txt").read_text()


def _solve_twofer(request: dict):
    done = [m for m in request["messages"] if m["role"] == "tool"]
    if not done:
        return tool_call(
            "create",
            call_id="c1",
            path="two_fer.py",
            file_text="def two_fer(name='you'):\n    return f'One for {name}, one for me.'\n",
        )
    return tool_call("finish", call_id="c2", summary="done")


def test_exported_agent_runs_outside_dgm_against_an_openai_compatible_endpoint(
    small_run_dir: Path, tmp_path: Path
) -> None:
    agent = tmp_path / "agent"
    export(small_run_dir, "best", agent, "dir")
    work, out = tmp_path / "repo", tmp_path / "out"
    work.mkdir()
    (work / "two_fer.py").write_text("def two_fer(name='you'):\n    pass\n")
    (tmp_path / "task.json").write_text('{"id": "demo", "problem_statement": "Implement two_fer."}')
    # The command EXPORT.md documents, with the manifest's placeholders filled.
    command = fill(
        solve_command(agent),
        {
            "agent_dir": ".",
            "workdir": str(work),
            "task_file": str(tmp_path / "task.json"),
            "output_dir": str(out),
        },
    )
    with FakeGateway(_solve_twofer, unix=False) as gateway:
        env = {
            "PATH": "/usr/bin:/bin",
            "DGM_LLM_URL": gateway.url,
            "DGM_LLM_TOKEN": "sk-test",
            "DGM_LLM_MODEL": "any-model",
        }
        subprocess.run(
            command, shell=True, cwd=agent, env=env, check=True, timeout=60, capture_output=True
        )
        assert gateway.requests[0]["path"] == "/v1/chat/completions"
        assert gateway.requests[0]["headers"]["Authorization"] == "Bearer sk-test"
    assert "One for" in (work / "two_fer.py").read_text()
    assert json.loads((out / "trajectory.json").read_text())["exit_status"] == "finished"


@pytest.mark.docker
def test_image_runs_the_agent(small_run_dir: Path, tmp_path: Path) -> None:
    image_or_missing("runtime")
    tag = "dgm-agent/test-export:node-3"
    message = export(small_run_dir, "best", tmp_path / "ctx", "image", tag=tag)
    assert tag in message
    work, out = tmp_path / "repo", tmp_path / "out"
    work.mkdir()
    out.mkdir()
    (work / "two_fer.py").write_text("def two_fer(name='you'):\n    pass\n")
    (tmp_path / "task.json").write_text('{"id": "demo", "problem_statement": "Implement two_fer."}')
    for folder in (work, out):
        folder.chmod(0o777)  # the image runs as its non-root `agent` user
    (work / "two_fer.py").chmod(0o666)
    try:
        with FakeGateway(_solve_twofer, unix=False) as gateway:
            subprocess.run(
                [
                    "docker",
                    "run",
                    "--rm",
                    "--network",
                    "host",
                    "-v",
                    f"{work}:/work",
                    "-v",
                    f"{tmp_path / 'task.json'}:/task/task.json:ro",
                    "-v",
                    f"{out}:/out",
                    "-e",
                    f"DGM_LLM_URL={gateway.url}",
                    "-e",
                    "DGM_LLM_MODEL=m",
                    tag,
                ],
                check=True,
                timeout=120,
                capture_output=True,
            )
        assert "One for" in (work / "two_fer.py").read_text()
        assert json.loads((out / "trajectory.json").read_text())["exit_status"] == "finished"
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.docker
@pytest.mark.slow
def test_export_then_dgm_eval_gives_the_same_results(
    small_run_dir: Path, tmp_path: Path, polyglot_dir: Path
) -> None:
    """The exported best agent, evaluated from its folder by `dgm eval` on a Polyglot
    subset with the scripted model, scores task for task as the node inside the run."""
    from dgm.benchmarks import load_benchmark
    from dgm.benchmarks.task_images import missing_images

    ids = ["python__beer-song", "python__dominoes"]
    missing = missing_images(load_benchmark("polyglot", str(polyglot_dir)).tasks("python"))
    if missing:
        missing_need("docker", f"judge images missing: {missing}")
    (tmp_path / "ids.txt").write_text("\n".join(ids) + "\n")
    common = ["--data", str(polyglot_dir), "--subset", f"@{tmp_path / 'ids.txt'}"]
    # The dry run's scripted model: beer-song is solved by any agent that can edit files;
    # dominoes only by an agent with a `search_files` tool. Real, mixed results.
    common += ["--llm", "scripted/capability", "--max-steps", "10"]
    _cli("eval", f"{small_run_dir}:{BEST_NODE}", *common, "--out", str(tmp_path / "inside"))
    _cli("export", str(small_run_dir), "best", "-o", str(tmp_path / "agent"))
    _cli("eval", str(tmp_path / "agent"), *common, "--out", str(tmp_path / "outside"))

    def outcomes(folder: str) -> dict[str, tuple]:
        data = json.loads((tmp_path / folder / "results.json").read_text())
        return {
            o["task_id"]: (o["resolved"], o["empty_patch"], o["tests_passed"], o["error"])
            for o in data["outcomes"]
        }

    inside = outcomes("inside")
    assert sorted(inside) == ids
    assert inside["python__beer-song"][0] is True
    assert outcomes("outside") == inside
