"""What an agent may ask for in its environment: `[environment]` of agent.toml, checked.

Requirements are package-index names with version specifiers and nothing else. A child
agent may rewrite its requirements, so every line is untrusted: URLs, local paths, VCS
links, editable installs and pip options (`--index-url`, `-r`, `--trusted-host`, ...)
are refused with the reason, because each would let the agent choose what the host
fetches or run code at fetch time.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from dgm import safefs
from dgm.errors import DgmError

REQUIREMENTS_LIMIT = 64 * 1024
MAX_REQUIREMENTS = 200
APT_NAME = re.compile(r"^[a-z0-9][a-z0-9+.-]{0,99}$")
_PATHLIKE = re.compile(r"^(\.|/|~|[A-Za-z]:\\)|[/\\]|\.(whl|zip|tar\.gz|tgz|tar\.bz2)$")


class RequirementRefused(DgmError):
    """A requirement line that is not an index name and version."""


@dataclass(frozen=True)
class EnvironmentSpec:
    """An agent's declared environment, normalised (the content hashed for reuse)."""

    requirements: tuple[str, ...] = ()
    apt: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.requirements and not self.apt


def check_requirement(line: str, where: str = "requirements") -> str:
    """The line as a normalised `name[extras]specifier; marker`, or `RequirementRefused`."""
    text = line.strip()
    fix = "write an index name and version, e.g. `litellm==1.74.0`"
    if text.startswith("-"):
        raise RequirementRefused(
            f"{where}: pip option {text.split()[0]!r} is not allowed ({text!r})",
            "dgm chooses the index; " + fix,
        )
    if "://" in text or text.startswith(("git+", "hg+", "svn+", "bzr+")):
        raise RequirementRefused(f"{where}: {text!r} is a URL or VCS link", fix)
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        if _PATHLIKE.search(text):
            raise RequirementRefused(f"{where}: {text!r} is a local path", fix) from None
        raise RequirementRefused(f"{where}: {text!r} is not a requirement", fix) from None
    if requirement.url:
        raise RequirementRefused(f"{where}: {text!r} names a direct URL ({requirement.url})", fix)
    return str(requirement)


def parse_requirements(text: str, where: str = "requirements.txt") -> tuple[str, ...]:
    """Every requirement of a requirements file (comments and blank lines skipped)."""
    lines: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        lines.append(check_requirement(line, f"{where} line {number}"))
    if len(lines) > MAX_REQUIREMENTS:
        raise RequirementRefused(
            f"{where} lists {len(lines)} requirements (at most {MAX_REQUIREMENTS})",
            "name the agent's direct dependencies only; pip resolves the rest",
        )
    return tuple(sorted(set(lines), key=str.lower))


def environment_of(agent_dir: Path) -> EnvironmentSpec:
    """`[environment]` of the agent's manifest; files are read without following links."""
    agent_dir = Path(agent_dir)
    try:
        manifest = tomllib.loads(safefs.read_text(agent_dir, "agent.toml", REQUIREMENTS_LIMIT))
    except (safefs.UnsafeFile, tomllib.TOMLDecodeError, FileNotFoundError):
        return EnvironmentSpec()  # load_manifest reports a bad manifest with its reason
    section = manifest.get("environment")
    if section is None:
        return EnvironmentSpec()
    if not isinstance(section, dict):
        raise DgmError(f"{agent_dir}/agent.toml: [environment] must be a table",
                       'e.g. [environment] requirements = "requirements.txt"')  # fmt: skip
    unknown = set(section) - {"requirements", "apt"}
    if unknown:
        raise DgmError(
            f"{agent_dir}/agent.toml: unknown [environment] key(s) {', '.join(sorted(unknown))}",
            "[environment] takes `requirements` (a file of the agent) and `apt` (a list)",
        )
    requirements: tuple[str, ...] = ()
    name = section.get("requirements")
    if name is not None:
        if not isinstance(name, str) or name.startswith("/") or ".." in Path(name).parts:
            raise DgmError(f"{agent_dir}/agent.toml: [environment] requirements = {name!r}",
                           "name a file inside the agent, e.g. requirements.txt")  # fmt: skip
        try:
            text = safefs.read_text(agent_dir, name, REQUIREMENTS_LIMIT)
        except (safefs.UnsafeFile, FileNotFoundError, OSError) as exc:
            raise DgmError(
                f"{agent_dir}/{name} cannot be read: {exc}",
                "it must be a regular file of the agent (no link)",
            ) from None
        requirements = parse_requirements(text, name)
    apt = section.get("apt", [])
    if not isinstance(apt, list) or not all(isinstance(p, str) and APT_NAME.match(p) for p in apt):
        raise RequirementRefused(
            f"{agent_dir}/agent.toml: [environment] apt = {apt!r}",
            'a list of Debian package names, e.g. apt = ["ripgrep"]',
        )
    return EnvironmentSpec(requirements, tuple(sorted(set(apt))))
