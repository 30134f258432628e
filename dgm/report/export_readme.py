"""The EXPORT.md and export.json written beside an exported agent: where it came from
(lineage from the seed, each step's problem statement, scores with denominators, models)
and how to run it outside dgm."""

from __future__ import annotations

import time
import tomllib
from pathlib import Path
from typing import Any

from dgm import safefs
from dgm.report import lineage
from dgm.store import Node, Run

# Where the sandbox (and the exported Docker image) puts things; the manifest's placeholders.
IMAGE_PATHS = {
    "agent_dir": "/agent",
    "workdir": "/work",
    "task_file": "/task/task.json",
    "output_dir": "/out",
}


def solve_command(agent_dir: Path) -> str | None:
    """The manifest's `solve` command template, or None when there is none."""
    try:  # an agent's file: never follow a link (see dgm/safefs.py)
        manifest = tomllib.loads(safefs.read_text(agent_dir, "agent.toml", 64 * 1024))
    except (safefs.UnsafeFile, tomllib.TOMLDecodeError):
        return None
    command = (manifest.get("commands") or {}).get("solve")
    return command if isinstance(command, str) else None


def fill(command: str, paths: dict[str, str]) -> str:
    """The command with its {placeholders} filled (other braces left alone)."""
    for key, value in paths.items():
        command = command.replace("{" + key + "}", value)
    return command


def export_manifest(run: Run, node: Node) -> dict[str, Any]:
    graph = lineage.build_lineage(run)
    chain = []
    for node_id in lineage.ancestry(graph, node.id):
        attrs = graph.nodes[node_id]
        chain.append(
            {
                "node": node_id,
                "commit": run.node(node_id).commit,
                "problem_statement": attrs["origin"],
                "passed": attrs["passed"],
                "total": attrs["total"],
                "cost_usd": round(attrs["cost_usd"], 4),
            }
        )
    models = run.aggregates.models_used([c["node"] for c in chain])
    benchmarks = sorted({e.benchmark for e in run.evaluations(node.id)})
    return {
        "format": "dgm-export/1",
        "run": {"name": run.config.name, "path": str(run.path.resolve())},
        "node": node.id,
        "commit": node.commit,
        "exported_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "benchmarks": benchmarks,
        "configured_model": run.config.llm.model,
        "models": models,
        "lineage": chain,
    }


def export_readme(manifest: dict[str, Any], solve: str | None) -> str:
    node, chain = manifest["node"], manifest["lineage"]
    last = chain[-1]
    score = f"{last['passed']}/{last['total']}" if last["total"] else "not evaluated"
    lines = [
        f"# Agent: node {node} of run `{manifest['run']['name']}`",
        "",
        f"Exported by dgm on {manifest['exported_at']} from commit `{manifest['commit']}`.",
        f"Score in the run: **{score}** tasks solved"
        + (f" ({', '.join(manifest['benchmarks'])})" if manifest["benchmarks"] else "")
        + ".",
        "",
        "## Lineage from the seed",
        "",
        "Each step is the problem statement the parent agent was asked to solve on its own",
        "code; the score is that node's own evaluations (solved/evaluated).",
        "",
    ]
    for step in chain:
        score = f"{step['passed']}/{step['total']}" if step["total"] else "–"
        statement = " ".join(step["problem_statement"].split())
        lines.append(f"- **node {step['node']}** ({score}, ${step['cost_usd']:.2f}): {statement}")
    lines += ["", "## Models used", ""]
    if manifest["models"]:
        lines += [f"- {m['role']}: `{m['model']}` ({m['calls']} calls)" for m in manifest["models"]]
    else:
        lines.append(f"- configured: `{manifest['configured_model']}` (no calls recorded)")
    lines += ["", "## How to run it", ""]
    if solve is None:
        lines.append("This codebase has no `agent.toml` with a `solve` command: see its own docs.")
        return "\n".join(lines) + "\n"
    local = fill(
        solve,
        {
            "agent_dir": ".",
            "workdir": "/path/to/repo",
            "task_file": "task.json",
            "output_dir": "out",
        },
    )
    lines += [
        "The agent speaks OpenAI Chat Completions to any compatible endpoint (OpenAI, vLLM,",
        "Ollama, llama.cpp's server, ...), named by three environment variables:",
        "",
        "```sh",
        "export DGM_LLM_URL=https://api.openai.com/v1   # base URL ending in /v1;"
        " for Ollama: http://localhost:11434/v1",
        "export DGM_LLM_TOKEN=$OPENAI_API_KEY           # sent as a bearer token; may be empty",
        "export DGM_LLM_MODEL=gpt-4o-mini               # the model name the endpoint knows",
        "```",
        "",
        "Write the task as JSON (`id`, `problem_statement`, optionally `language`, `max_steps`,",
        "`time_limit_s`), then run, from this folder, on a git repository to change:",
        "",
        "```sh",
        'echo \'{"id": "demo", "problem_statement": "Make the failing test pass."}\' > task.json',
        local,
        "```",
        "",
        "The agent edits the repository in place and writes `out/trajectory.json` (its",
        "messages, tool calls, timings and how it ended); `git diff` in the repository is",
        "its result. The manifest `agent.toml` holds the command templates.",
        "",
        "To evaluate it again: `dgm eval <this folder>`. To package it as a Docker image:",
        f"`dgm export {manifest['run']['path']} {node} -o DIR --format image`, then",
        "",
        "```sh",
        "docker run --rm -v $PWD/repo:/work -v $PWD/task.json:/task/task.json:ro \\",
        "  -v $PWD/out:/out -e DGM_LLM_URL -e DGM_LLM_TOKEN -e DGM_LLM_MODEL IMAGE",
        "```",
        "",
        "(add `--network host` when the endpoint runs on this machine).",
    ]
    return "\n".join(lines) + "\n"
