"""One place that connects to the Docker engine and explains failure as a DgmError."""

from __future__ import annotations

from functools import cache

from dgm.errors import SandboxError


@cache
def _client(timeout: int) -> object:
    import docker

    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except Exception as exc:  # no engine, no socket, no permission
        raise SandboxError(
            f"cannot reach the Docker engine: {exc}",
            "start Docker (or join the docker group), or use sandbox backend 'local'",
        ) from None
    return client


def docker_client(timeout: int = 120):  # noqa: ANN201 - docker.DockerClient, imported lazily
    return _client(timeout)


def docker_available() -> str | None:
    """None when an engine answers, else the reason it does not."""
    try:
        docker_client()
    except SandboxError as exc:
        return exc.message
    return None
