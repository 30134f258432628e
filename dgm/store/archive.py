"""archive.git: every agent codebase as a commit in one bare repository.

A node's commit has its parent node's commit as git parent, so the archive *is* the
lineage tree and git packs each node as roughly the size of its diff. Reading a node
checks its tree out directly (cost independent of depth; DGM replays its whole patch
chain instead). Callers never need git plumbing: everything goes through `Archive`.

GitPython drives the git CLI here; the plumbing (temporary index, commit-tree) keeps
writes away from any working tree, so concurrent readers never see half a node.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import git

from dgm.errors import DgmError, RunDirError
from dgm.safefs import link_escapes
from dgm.workspace_git import GIT_IDENTITY

NOT_SOURCE = (":(exclude,glob)**/__pycache__/**", ":(exclude,glob)**/*.py[co]")


class UnsafeTreeError(DgmError):
    """A codebase holds a symlink that points outside it."""


class Archive:
    """A bare git repository holding one commit per node and a ref per node."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self.repo = git.Repo(self.path)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise RunDirError(
                f"{self.path} is not a git repository (the run's archive is missing or corrupt)",
                "restore archive.git from a backup, or start a new run with `dgm init`",
            ) from None

    @classmethod
    def init(cls, path: Path) -> Archive:
        git.Repo.init(path, bare=True)
        archive = cls(path)
        # Keep packs small and loose objects few; auto-gc stays on.
        archive.repo.git.config("gc.auto", "256")
        return archive

    # -- writing -----------------------------------------------------------------------
    def commit_tree(self, source: Path, parent: str | None, message: str) -> str:
        """Commit the whole directory `source` (honouring its .gitignore) as a child of
        `parent` and return the commit sha. The source's own `.git` is never included, nor
        bytecode caches (pip compiles the wheel's seed agent on install)."""
        source = Path(source)
        if not source.is_dir():
            raise DgmError(f"cannot add node: {source} is not a directory")
        with self._temp_index() as env:
            self.repo.git.execute(
                ["git", "-C", str(source), "--work-tree", str(source), "add", "--all", "--",
                 ".", *NOT_SOURCE],
                env=env,
            )  # fmt: skip
            self._refuse_escaping_links(env)
            tree = self.repo.git.execute(["git", "write-tree"], env=env)
        return self._commit(tree, parent, message)

    def commit_diff(self, parent: str, diff: str, message: str) -> str:
        """Apply a unified diff (as `git diff --binary` writes it) to `parent`'s tree and
        commit the result as its child."""
        with self._temp_index() as env:
            self.repo.git.execute(["git", "read-tree", parent], env=env)
            if diff.strip():
                with tempfile.NamedTemporaryFile("w", suffix=".diff", delete=False) as fh:
                    fh.write(diff if diff.endswith("\n") else diff + "\n")
                try:
                    self.repo.git.execute(
                        ["git", "apply", "--cached", "--whitespace=nowarn", fh.name], env=env
                    )
                except git.GitCommandError as exc:
                    raise DgmError(
                        f"the diff does not apply to node commit {parent[:10]}: "
                        f"{exc.stderr.strip()}"
                    ) from None
                finally:
                    os.unlink(fh.name)
            self._refuse_escaping_links(env)
            tree = self.repo.git.execute(["git", "write-tree"], env=env)
        return self._commit(tree, parent, message)

    def set_ref(self, node_id: int, sha: str) -> None:
        self.repo.git.update_ref(f"refs/nodes/{node_id}", sha)

    def set_refs(self, refs: dict[int, str]) -> None:
        """Set many node refs in one git call (one transaction)."""
        commands = "".join(f"update refs/nodes/{n} {sha}\n" for n, sha in refs.items())
        self.repo.git.update_ref("--stdin", istream=_StringStream(commands))

    def refs(self) -> dict[int, str]:
        out = self.repo.git.for_each_ref("--format=%(refname) %(objectname)", "refs/nodes/")
        refs = {}
        for line in out.splitlines():
            name, sha = line.split()
            refs[int(name.rsplit("/", 1)[1])] = sha
        return refs

    def has_commit(self, sha: str) -> bool:
        try:
            self.repo.git.cat_file("-e", f"{sha}^{{commit}}")
        except git.GitCommandError:
            return False
        return True

    # -- reading -----------------------------------------------------------------------
    def trees(self, shas: list[str]) -> dict[str, str]:
        """Each commit's tree id: equal trees are byte-identical codebases."""
        out: dict[str, str] = {}
        for start in range(0, len(shas), 500):
            batch = shas[start : start + 500]
            lines = self.repo.git.rev_parse(*(f"{sha}^{{tree}}" for sha in batch)).split()
            out.update(zip(batch, lines, strict=True))
        return out

    def materialize(self, sha: str, dest: Path) -> Path:
        """Write the codebase of commit `sha` into `dest` (created if needed)."""
        dest = Path(dest)
        dest.mkdir(parents=True, exist_ok=True)
        with self._temp_index() as env:
            self.repo.git.execute(
                ["git", "--work-tree", str(dest), "checkout", "-f", sha, "--", "."], env=env
            )
        return dest

    def diff(self, old: str | None, new: str) -> str:
        """Unified diff from `old` to `new` (from the empty tree when `old` is None)."""
        base = old or self.repo.git.hash_object("-t", "tree", "/dev/null")
        return self.repo.git.diff(base, new, "--binary", stdout_as_string=True)

    def files(self, sha: str) -> list[str]:
        return self.repo.git.ls_tree("-r", "--name-only", sha).splitlines()

    def read_file(self, sha: str, path: str) -> str:
        return self.repo.git.show(f"{sha}:{path}")

    def bundle(self, dest: Path, sha: str) -> Path:
        """A git bundle of `sha` with its whole ancestry (for export)."""
        self.repo.git.update_ref("refs/dgm-export/head", sha)
        try:
            self.repo.git.bundle("create", str(dest), "refs/dgm-export/head")
        finally:
            self.repo.git.update_ref("-d", "refs/dgm-export/head")
        return Path(dest)

    def pack(self) -> None:
        """Repack loose objects into deltas (what makes a node cost about its diff)."""
        self.repo.git.gc("--quiet")

    # -- helpers -----------------------------------------------------------------------
    def _commit(self, tree: str, parent: str | None, message: str) -> str:
        args = ["git", "commit-tree", tree, "-m", message or "(no message)"]
        if parent:
            args[3:3] = ["-p", parent]
        return self.repo.git.execute(args, env={**os.environ, **GIT_IDENTITY})

    def _refuse_escaping_links(self, env: dict[str, str]) -> None:
        """No node may hold a symlink that leaves its tree (see safefs.link_escapes):
        whoever checks the node out later must not be pointed at a host file."""
        staged = self.repo.git.execute(["git", "ls-files", "-s", "-z"], env=env)
        links = [
            (line.split("\t", 1)[1], line.split()[1])
            for line in staged.split("\0")
            if line.startswith("120000 ")
        ]
        if not links:
            return
        batch = "".join(f"{sha}\n" for _, sha in links)
        out = self.repo.git.execute(
            ["git", "cat-file", "--batch"], env=env, istream=_StringStream(batch),
            stdout_as_string=False,
        )  # fmt: skip
        targets, pos = [], 0
        for _ in links:  # "<sha> blob <size>\n<content>\n"
            header_end = out.index(b"\n", pos)
            size = int(out[pos:header_end].split()[2])
            targets.append(out[header_end + 1 : header_end + 1 + size].decode("utf-8", "replace"))
            pos = header_end + 1 + size + 1
        for (path, _), target in zip(links, targets, strict=True):
            if link_escapes(path, target):
                raise UnsafeTreeError(
                    f"refused: the symlink {path!r} -> {target!r} leaves the agent's tree",
                    "a node may only hold links to its own files (relative, inside the tree)",
                )

    def _temp_index(self) -> _TempIndex:
        return _TempIndex(self.path)


class _StringStream:
    """What GitPython wants as `istream`: a file-like with fileno(), from a string."""

    def __new__(cls, text: str):  # noqa: D102
        fh = tempfile.TemporaryFile()
        fh.write(text.encode())
        fh.seek(0)
        return fh


class _TempIndex:
    """A throwaway index file, so writes never touch a shared index or working tree."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir

    def __enter__(self) -> dict[str, str]:
        fd, self.index = tempfile.mkstemp(prefix="dgm-index-")
        os.close(fd)
        os.unlink(self.index)  # git wants to create it itself
        return {
            **os.environ,
            **GIT_IDENTITY,
            "GIT_DIR": str(self.git_dir),
            "GIT_INDEX_FILE": self.index,
        }

    def __exit__(self, *exc: object) -> None:
        for path in (self.index, self.index + ".lock"):
            if os.path.exists(path):
                os.unlink(path)
