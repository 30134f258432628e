"""User-facing errors.

Every error a user can cause (bad config, missing image, corrupt run dir, ...) is a
`DgmError`: one line that names the problem, plus a hint that names the fix. The CLI
prints it without a traceback unless `--debug` is given.
"""

from __future__ import annotations


class DgmError(Exception):
    """An error with a one-line message and an optional fix hint."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class ConfigError(DgmError):
    """run.toml or a config file is invalid."""


class RunDirError(DgmError):
    """A run directory is missing, corrupt, or of an unsupported schema."""


class NotFoundError(DgmError):
    """A node, task, image or other named thing does not exist."""


class SandboxError(DgmError):
    """The sandbox could not be created or used."""


class BudgetExceeded(DgmError):
    """A budget (tokens, dollars, calls, evaluations, time) has been reached."""


class InfrastructureFailure(DgmError):
    """A job failed because the world did, not the agent: the LLM provider down, the Docker
    engine not answering the harness, the host's disk full, a lost node. Nothing is recorded
    against the agent; the job runs again once `dependency` is back."""

    def __init__(self, dependency: str, message: str, hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.dependency = dependency
        """What is down: `llm:<provider>`, `docker`, `disk` or `ray`."""
