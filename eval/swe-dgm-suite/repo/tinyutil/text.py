"""Text helpers."""

import re


def slugify(text: str) -> str:
    """A lower-case, dash-separated identifier for `text`, e.g. 'Hello World' -> 'hello-world'."""
    return re.sub(r"[^a-z0-9]", "-", text.lower())


def initials(name: str) -> str:
    return "".join(part[0].upper() for part in name.split())
