"""`dgm export`: a node's agent out of dgm, as a folder, a git bundle or a Docker image.

dir     the codebase (with its agent.toml), EXPORT.md (lineage, scores, models, how to
        run it) and export.json (the same, for machines)
bundle  a git bundle whose history is the node's ancestry: one commit per node (the
        archive's own commits, same hashes, the problem statement as message), a tag
        `node-<id>` on each, and `main` checked out by `git clone`
image   a Docker image FROM dgm's runtime image with the agent at /agent and the
        manifest's solve command as entrypoint
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from pathlib import Path

from dgm import safefs
from dgm.errors import DgmError
from dgm.report import lineage
from dgm.report.export_readme import (
    IMAGE_PATHS,
    export_manifest,
    export_readme,
    fill,
    solve_command,
)
from dgm.store import Node, Run
from dgm.store.steering import marked_nodes

FORMATS = ("dir", "bundle", "image")


def resolve_node(run: Run, spec: str) -> Node:
    """`best` (the node `dgm status` calls best) or a node id; never a node the judge
    caught tampering with the test run (no override: its scores prove nothing)."""
    if spec == "best":
        best = lineage.best_node(lineage.build_lineage(run))
        if best is None:
            raise DgmError(
                f"run {run.path} has no evaluated node that may be best, so no best node yet",
                "give a node id (see `dgm tree`), or evaluate the run first",
            )
        node = run.node(best)
    else:
        node = run.node(spec)
    if node.id in marked_nodes(run.db, "ban"):
        raise DgmError(
            f"node {node.id} is not exported: it was banned (dgm steer / dgm serve)",
            "export another node (see `dgm status`); a banned node is never shipped",
        )
    forged = run.tampered_evaluations(node.id)
    if forged:
        evidence = " ".join(forged[0].tamper_evidence.split())[:160]
        raise DgmError(
            f"node {node.id} is not exported: the judge caught it tampering with the test run "
            f"in {len(forged)} evaluation(s) (first: {forged[0].task_id}: "
            f"{evidence})",
            "export another node (see `dgm status`); a tampered node is never exported",
        )
    return node


def export(run_dir: Path, spec: str, out: Path, fmt: str, tag: str | None = None) -> str:
    """Export and return a one-line description of what was written."""
    if fmt not in FORMATS:
        raise DgmError(f"unknown export format {fmt!r}", f"use one of: {', '.join(FORMATS)}")
    out = Path(out).resolve()
    # Absolute paths: git runs with its own working directory.
    with Run.open(Path(run_dir).resolve()) as run:
        node = resolve_node(run, spec)
        if fmt == "dir":
            export_dir(run, node, out)
            return f"node {node.id} exported to {out}"
        if fmt == "bundle":
            path = export_bundle(run, node, out)
            return f"node {node.id} and its {node.depth} ancestors bundled in {path}"
        image = export_image(run, node, out, tag)
        return f"node {node.id} built as Docker image {image} (build context in {out})"


def export_dir(run: Run, node: Node, dest: Path) -> Path:
    _check_empty(dest)
    run.checkout(node.id, dest)
    manifest = export_manifest(run, node)
    # The codebase is the agent's: a planted `EXPORT.md -> ~/.bashrc` is replaced, not
    # written through.
    safefs.write_text_fresh(dest, "export.json", json.dumps(manifest, indent=1) + "\n")
    safefs.write_text_fresh(dest, "EXPORT.md", export_readme(manifest, solve_command(dest)))
    return dest


def export_bundle(run: Run, node: Node, out: Path) -> Path:
    """Write `out` (a .bundle file, or `node-<id>.bundle` inside the folder `out`)."""
    path = out if out.suffix == ".bundle" else out / f"node-{node.id}.bundle"
    if path.exists():
        raise DgmError(f"{path} already exists", "choose another -o or remove it")
    path.parent.mkdir(parents=True, exist_ok=True)
    chain = lineage.ancestry(lineage.build_lineage(run), node.id)
    with tempfile.TemporaryDirectory(prefix="dgm-bundle-") as tmp:
        # A throwaway repository borrowing archive.git's objects: the refs the bundle
        # needs are made there, never in the append-only archive.
        git = ["git", "--git-dir", tmp]
        subprocess.run(["git", "init", "-q", "--bare", tmp], check=True, capture_output=True)
        objects = (run.archive.path / "objects").resolve()
        (Path(tmp) / "objects" / "info" / "alternates").write_text(f"{objects}\n")
        refs = "".join(f"update refs/tags/node-{n} {run.node(n).commit}\n" for n in chain)
        refs += f"update refs/heads/main {node.commit}\n"
        subprocess.run([*git, "update-ref", "--stdin"], input=refs, text=True, check=True)
        subprocess.run([*git, "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
        proc = subprocess.run(
            [
                *git,
                "bundle",
                "create",
                str(path.resolve()),
                "HEAD",
                "refs/heads/main",
                *(f"refs/tags/node-{n}" for n in chain),
            ],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise DgmError(f"git bundle failed: {proc.stderr.strip()}")
    return path


def export_image(run: Run, node: Node, out: Path, tag: str | None = None) -> str:
    """Build the image from a context written to `out` (agent/ + Dockerfile); returns tag."""
    runtime = _runtime_image()
    _check_empty(out)
    agent = export_dir(run, node, out / "agent")
    solve = solve_command(agent)
    if solve is None:
        raise DgmError(
            f"node {node.id}'s codebase has no agent.toml with a `solve` command",
            "an image needs the manifest's solve command as its entrypoint",
        )
    tag = tag or f"dgm-agent/{_slug(run.config.name)}:node-{node.id}"
    entry = json.dumps(["/bin/sh", "-c", fill(solve, IMAGE_PATHS)])
    safefs.write_text_fresh(
        out,
        "Dockerfile",
        f"# Generated by `dgm export --format image`: node {node.id} of run "
        f"{run.config.name}.\nFROM {runtime}\n"
        "COPY agent /agent\n"
        f'LABEL dgm.run="{_slug(run.config.name)}" dgm.node="{node.id}" '
        f'dgm.commit="{node.commit}"\n'
        "USER agent\nWORKDIR /work\n"
        f"ENTRYPOINT {entry}\n",
    )
    from dgm.sandbox.docker_client import docker_client

    try:
        stream = docker_client(timeout=600).api.build(
            path=str(out), tag=tag, rm=True, forcerm=True, pull=False, decode=True
        )
        for event in stream:
            if "error" in event:
                raise DgmError(f"building image {tag} failed: {event['error'].strip()}")
    except DgmError:
        raise
    except Exception as exc:  # engine unreachable, bad context, ...
        raise DgmError(
            f"building image {tag} failed: {exc}", "check that the Docker engine is running"
        ) from None
    return tag


def _runtime_image() -> str:
    try:
        from dgm.sandbox import images
    except ImportError:
        raise DgmError(
            "the sandbox images are not available in this installation",
            "run `dgm sandbox build runtime` once dgm's sandbox is installed",
        ) from None
    return images.resolve("runtime")  # a NotFoundError naming `dgm sandbox build runtime`


def _check_empty(dest: Path) -> None:
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise DgmError(f"{dest} already exists and is not empty", "export into a new folder")


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9_.-]+", "-", name.lower()).strip("-.") or "run"
