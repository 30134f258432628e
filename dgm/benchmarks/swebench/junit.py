"""The judge's JUnit report (pytest xunit1), read on the host: per-test statuses keyed as the
official log parsers key them, and the digest the result stream compares it with."""

from __future__ import annotations

import hashlib

from dgm.benchmarks.judging import xml_report_root

MAX_REPORT_BYTES = 32 * 1024 * 1024
_RANK = {"PASSED": 0, "XFAIL": 1, "SKIPPED": 2, "FAILED": 3, "ERROR": 4}


def digest(data: bytes) -> str:
    """What the stream plugin says of the report pytest wrote (sha256, hex)."""
    return hashlib.sha256(data).hexdigest()


def parse_junit(data: bytes) -> dict[str, str] | None:
    """JUnit XML (pytest xunit1) -> {node id: PASSED|FAILED|ERROR|SKIPPED|XFAIL}; None if bad."""
    root = xml_report_root(data, MAX_REPORT_BYTES)
    if root is None:
        return None
    tests: dict[str, str] = {}
    for case in root.iter("testcase"):
        node = node_id(case.get("file") or "", case.get("classname") or "", case.get("name") or "")
        tags = {child.tag for child in case}
        skipped = case.find("skipped")
        if "failure" in tags or "error" in tags:
            status = "ERROR" if "error" in tags and "failure" not in tags else "FAILED"
        elif skipped is not None:
            status = "XFAIL" if skipped.get("type") == "pytest.xfail" else "SKIPPED"
        else:
            status = "PASSED"
        # Keyed as the log parsers key a test: its id up to the first space (parametrised
        # ids with spaces are cut there in the official test lists too); the worst wins.
        key = node.split()[0] if node.strip() else node
        if _RANK[status] >= _RANK.get(tests.get(key, ""), -1):
            tests[key] = status
    return tests


def node_id(file: str, classname: str, name: str) -> str:
    """pytest's node id from xunit1 attributes: file, dotted module.Class, test name."""
    module = file.removesuffix(".py").replace("/", ".")
    rest = classname[len(module) + 1 :] if classname.startswith(module + ".") else ""
    if not file:
        parts = classname.split(".")
        return "::".join(parts + [name])
    return "::".join([file, *[p for p in rest.split(".") if p], name])
