"""Agent environments without trusting the agent: requirements are index names and
versions only; the host fetches binary wheels and never runs a package's build script;
an unchanged environment is reused at once. The index here is a local folder (pip's own
PIP_FIND_LINKS / PIP_NO_INDEX, host settings the agent cannot reach), so no network."""

from __future__ import annotations

import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from dgm.errors import DgmError
from dgm.sandbox.agent_env import ensure_env, env_key, list_envs
from dgm.sandbox.env_requirements import (
    EnvironmentSpec,
    RequirementRefused,
    check_requirement,
    environment_of,
)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("https://evil.example/pkg-1.0.tar.gz", "URL"),
        ("pkg @ https://evil.example/pkg.whl", "URL"),
        ("git+https://github.com/x/y", "VCS"),
        ("./local/pkg", "local path"),
        ("/abs/pkg.whl", "local path"),
        ("-e .", "pip option"),
        ("--index-url https://evil.example/simple", "pip option"),
        ("--extra-index-url=https://x", "pip option"),
        ("-r other.txt", "pip option"),
    ],
)
def test_urls_paths_and_options_are_refused_with_the_reason(line, reason):
    with pytest.raises(RequirementRefused, match=reason):
        check_requirement(line)


def test_index_names_with_versions_pass_normalised():
    assert check_requirement("LiteLLM[proxy] >= 1.2, <2 ; python_version>='3.8'") == (
        'LiteLLM[proxy]<2,>=1.2; python_version >= "3.8"'
    )


def test_manifest_environment_is_read_and_checked(tmp_path):
    (tmp_path / "agent.toml").write_text(
        '[commands]\nsolve = "true"\n[environment]\nrequirements = "reqs.txt"\n'
    )
    (tmp_path / "reqs.txt").write_text("# deps\nzeta==1\nalpha==2  # pinned\n")
    assert environment_of(tmp_path) == EnvironmentSpec(("alpha==2", "zeta==1"))
    (tmp_path / "reqs.txt").write_text("alpha==2\nhttp://x/y.tar.gz\n")
    with pytest.raises(RequirementRefused, match="reqs.txt line 2"):
        environment_of(tmp_path)


def _index(tmp_path: Path, monkeypatch) -> Path:
    index = tmp_path / "index"
    index.mkdir()
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_CACHE_DIR", str(tmp_path / "pip-cache"))
    return index


def _wheel(index: Path, name: str, version: str) -> None:
    dist = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(index / f"{name}-{version}-py3-none-any.whl", "w") as whl:
        whl.writestr(f"{name}/__init__.py", f"VERSION = {version!r}\n")
        whl.writestr(
            f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        )
        whl.writestr(
            f"{dist}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        whl.writestr(f"{dist}/RECORD", "")


def test_built_once_then_reused_in_under_a_second(tmp_path, monkeypatch):
    _wheel(_index(tmp_path, monkeypatch), "tinypkg", "1.0")
    spec = EnvironmentSpec(("tinypkg==1.0",))
    lines: list[str] = []
    built = ensure_env(spec, root=tmp_path / "envs", progress=lines.append)
    assert built is not None and built.build_s is not None
    assert any("fetching binary wheels" in line for line in lines)
    site = built.path / "lib" / "python3.11" / "site-packages"
    assert (site / "tinypkg" / "__init__.py").read_text() == "VERSION = '1.0'\n"
    assert (built.path / "bin" / "python").readlink() == Path("/usr/bin/python3.11")
    assert [(r["name"], r["version"]) for r in built.resolved] == [("tinypkg", "1.0")]
    started = time.monotonic()
    again = ensure_env(spec, root=tmp_path / "envs")
    assert time.monotonic() - started < 1.0
    assert again is not None and again.build_s is None and again.path == built.path
    assert [e["key"] for e in list_envs(tmp_path / "envs")] == [env_key(spec)]
    assert env_key(EnvironmentSpec(("tinypkg==1.1",))) != env_key(spec)


def test_a_build_script_never_runs_on_the_host(tmp_path, monkeypatch):
    """An sdist whose setup.py writes a file: refused for want of a wheel, file absent."""
    index = _index(tmp_path, monkeypatch)
    marker = tmp_path / "pwned"
    package = tmp_path / "evilpkg-1.0"
    package.mkdir()
    (package / "setup.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\n"
        "from setuptools import setup\nsetup(name='evilpkg', version='1.0')\n"
    )
    (package / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: evilpkg\nVersion: 1.0\n")
    with tarfile.open(index / "evilpkg-1.0.tar.gz", "w:gz") as sdist:
        sdist.add(package, arcname="evilpkg-1.0")
    with pytest.raises(DgmError, match="evilpkg==1.0 cannot be resolved to a binary wheel"):
        ensure_env(EnvironmentSpec(("evilpkg==1.0",)), root=tmp_path / "envs")
    assert not marker.exists()
    assert list_envs(tmp_path / "envs") == []


@pytest.mark.docker
def test_debian_packages_come_with_what_they_need_beyond_the_image(tmp_path, monkeypatch):
    """`apt = ["jq"]`: jq needs libjq1 and libonig5, which the runtime image lacks; apt
    resolves them against the image's own packages (libc6 is the image's), they are unpacked
    on the host (no maintainer script), and jq runs inside from PATH with its libraries."""
    from dgm.jobs.agent_run import AgentRunRequest, run_agent
    from dgm.workspace_git import git_init
    from tests.needs import image_or_missing

    image = image_or_missing("runtime")
    monkeypatch.setenv("DGM_AGENT_ENV_DIR", str(tmp_path / "envs"))
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "agent.toml").write_text(
        "[commands]\nsolve = \"sh -c 'echo 1 2 3 | jq -s length > /out/jq.txt 2>&1; "
        "command -v jq >> /out/jq.txt'\"\n"
        '[environment]\napt = ["jq"]\n'
    )
    work = tmp_path / "work"
    work.mkdir()
    base = git_init(work)
    try:
        result = run_agent(AgentRunRequest(agent, image, {"id": "t"}, base, 120, workspace=work),
                           tmp_path / "out")  # fmt: skip
    except DgmError as exc:
        if "cannot be fetched" in exc.message:
            pytest.skip(f"no Debian mirror reachable: {exc.message}")
        raise
    said = (tmp_path / "out" / "jq.txt").read_text().splitlines()
    assert said == ["3", "/opt/dgm-agent-env/apt/usr/bin/jq"], (said, result.output)
    assert result.environment is not None
    why = {r["name"]: r["why"] for r in result.environment["resolved"]}
    assert why["apt:jq"] == "named" and why["apt:libjq1"] == "dependency", why
    assert why["apt:libonig5"] == "dependency", why
    assert "apt:libc6" not in why  # the image has it: never shadowed


def test_an_environment_received_from_elsewhere_is_unpacked_not_built(tmp_path, monkeypatch):
    """A Ray node's `ensure_env` asks its remote source (the head) first: the tar of a built
    environment is unpacked with its links; a tar whose member leaves the folder, or one of
    another key, is refused and the node builds it itself."""
    import io

    from dgm.sandbox.agent_env import pack_env, set_remote_source

    _wheel(_index(tmp_path, monkeypatch), "tinypkg", "1.0")
    spec = EnvironmentSpec(("tinypkg==1.0",))
    built = ensure_env(spec, root=tmp_path / "head")
    assert built is not None
    asked: list[EnvironmentSpec] = []
    set_remote_source(lambda wanted: asked.append(wanted) or pack_env(built))
    try:
        received = ensure_env(spec, root=tmp_path / "node")
        assert asked == [spec] and received is not None and received.build_s is None
        assert (received.path / "bin" / "python").readlink() == Path("/usr/bin/python3.11")
        assert received.resolved == built.resolved
        evil = io.BytesIO()
        with tarfile.open(fileobj=evil, mode="w") as tar:
            member = tarfile.TarInfo("../../escaped")
            tar.addfile(member, io.BytesIO(b""))
        set_remote_source(lambda wanted: evil.getvalue())
        other = ensure_env(spec, root=tmp_path / "node2")
        assert other is not None and other.build_s is not None  # built here instead
        assert not list(tmp_path.rglob("escaped"))
    finally:
        set_remote_source(None)


def test_debian_packages_are_resolved_again_for_a_new_runtime_image(monkeypatch):
    from dgm.sandbox import images

    wheels, debs = EnvironmentSpec(("tinypkg==1.0",)), EnvironmentSpec((), ("jq",))
    before = env_key(wheels), env_key(debs)
    monkeypatch.setattr(images, "recipe_hash", lambda name: "a-new-runtime-recipe")
    # What an apt environment lacks was decided against the old image's packages.
    assert env_key(debs) != before[1]
    assert env_key(wheels) == before[0]  # wheels do not depend on the image's packages
