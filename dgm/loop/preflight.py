"""The checks that run before a run directory is made and before any money is spent."""

from __future__ import annotations

from dgm.benchmarks import load_benchmark
from dgm.benchmarks.stages import stages_for
from dgm.benchmarks.task_images import missing_images
from dgm.config import RunConfig
from dgm.errors import DgmError, NotFoundError, SandboxError
from dgm.jobs.expand.job import EXPAND_IMAGE
from dgm.sandbox.session import choose_backend


def preflight(config: RunConfig) -> None:
    """Everything a run needs, checked before the run directory is made and before the
    first LLM call: benchmark data and task ids, the models and their API keys, Docker,
    images. One error lists all the missing images, each with its fix."""
    from dgm.dependencies import require
    from dgm.gateway import Gateway

    bench = config.benchmark
    llm = config.llm
    require([bench.name], config.executor.kind, [llm.model, llm.diagnose_model or ""])
    benchmark = load_benchmark(bench.name, bench.data, bench.test_timeout_s)
    from dgm.scripted.worlds import is_world_model, register

    if any(is_world_model(m) for m in (config.llm.model, config.llm.diagnose_model)):
        register(benchmark.task)  # a dry run's scripted model plays the LLM
    # Building the backends checks model strings, API keys and prices; no port is opened.
    Gateway.from_config(
        config, run=config.name, log_dir=None, on_usage=None, port=None
    ).start().stop()
    tasks = [benchmark.task(t) for s in stages_for(bench, benchmark) for t in s.task_ids]
    problems: list[str] = []
    if choose_backend(config.sandbox.backend) == "docker":
        from dgm.sandbox.docker_client import docker_available

        reason = docker_available()
        if reason is not None:
            raise SandboxError(f"Docker is not available: {reason}", "start the Docker engine, "
                               "or set sandbox.backend = 'local' (weaker isolation)")  # fmt: skip
        problems += missing_images(tasks)
        try:
            from dgm.sandbox import images

            images.resolve(EXPAND_IMAGE)
        except NotFoundError as exc:
            problems.append(f"{EXPAND_IMAGE}: {exc.hint}")
    if problems:
        raise DgmError(
            "the run cannot start: " + "; ".join(dict.fromkeys(problems)),
            "build the missing images with `dgm sandbox build`",
        )
