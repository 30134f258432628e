"""`dgm report`: the run as one self-contained HTML file (inline CSS, JS and data)."""

from __future__ import annotations

import html
import json
from importlib import resources
from pathlib import Path

from dgm.errors import DgmError
from dgm.report.data import report_data
from dgm.store import Run


def render_html(data: dict) -> str:
    """The page for report data: template + CSS + JS + the data as one JSON blob."""
    files = resources.files("dgm.report")
    template = (files / "template.html").read_text(encoding="utf-8")
    css = (files / "report.css").read_text(encoding="utf-8")
    js = (files / "report.js").read_text(encoding="utf-8")
    # `</` would end the <script> element early; `<\/` is the same JSON string.
    blob = json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")
    parts = {"__TITLE__": html.escape(data["run"]["name"]), "__CSS__": css, "__JS__": js}
    page = template
    for key, value in parts.items():
        page = page.replace(key, value)
    # The data last, so nothing inside it is ever taken for a placeholder.
    return page.replace("__DATA__", blob)


def write_report(run_dir: Path, out: Path | None = None) -> Path:
    """Write the report of the run at `run_dir` to `out` (default: RUN_DIR/report.html)."""
    out = Path(out) if out else Path(run_dir) / "report.html"
    if out.is_dir():
        raise DgmError(f"{out} is a directory", "give a file name, e.g. -o report.html")
    if not out.parent.exists():
        raise DgmError(f"folder {out.parent} does not exist", "create it or choose another -o")
    with Run.open(run_dir) as run:
        data = report_data(run, out.parent)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(render_html(data), encoding="utf-8")
    tmp.replace(out)
    return out
