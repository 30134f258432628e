"""The shape of dgm/: its rooms (subpackages and top-level modules) import one way, no
file grows past 400 lines, and SQL lives only in the store.

A room is the first part of a module's name under dgm (`dgm.store.run` -> `store`). Every
import between two different rooms, at any depth of either, is an edge; the edges must
form no circle, so each room can be read and changed knowing only the rooms below it.
"""

from __future__ import annotations

import ast
import graphlib
import re
from pathlib import Path

import pytest

DGM = Path(__file__).resolve().parent.parent / "dgm"
MAX_LINES = 400
SQL = re.compile(r"""["'](\s*)(SELECT|INSERT|UPDATE|DELETE)\s""")
COMMANDS = "commands"
"""Every `dgm <cmd>` entry point: no other room may import it."""
LAYERS: list[set[str]] = [
    {"commands"},
    {"evaluation", "simulate"},
    {"loop"},
    {"executors", "strategies"},
    {"jobs"},
    {"benchmarks"},
    {"sandbox", "gateway"},
    {"store"},
]
"""The main rooms, top to bottom: a room imports only rooms of its own layer or below."""


def _module(path: Path, root: Path = DGM) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    return ".".join(rel.parts).removesuffix(".__init__")


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "dgm" else None


def _imports(path: Path, root: Path = DGM) -> set[str]:
    """Every module named by an import statement in the file (relative ones resolved)."""
    module = _module(path, root)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = module.split(".")
                keep = len(package) - node.level + (1 if path.name == "__init__.py" else 0)
                base = package[:keep] + ([node.module] if node.module else [])
                found.add(".".join(base))
                found.update(".".join(base + [a.name]) for a in node.names)
            elif node.module:
                found.add(node.module)
                found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def room_graph(root: Path = DGM) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        me = _room(_module(path, root))
        for target in _imports(path, root):
            other = _room(target)
            if me and other and other != me:
                edges.setdefault(me, set()).add(other)
    return edges


def test_rooms_import_each_other_in_one_direction_only() -> None:
    edges = room_graph()
    try:
        order = list(graphlib.TopologicalSorter(edges).static_order())
    except graphlib.CycleError as exc:
        pytest.fail("rooms of dgm/ import each other in a circle: " + " -> ".join(exc.args[1]))
    assert {"commands", "loop", "store", "jobs"} <= set(order)


def upward_imports(edges: dict[str, set[str]]) -> list[str]:
    layer = {room: depth for depth, rooms in enumerate(LAYERS) for room in rooms}
    return sorted(
        f"{room} -> {other}"
        for room, targets in edges.items()
        for other in targets
        if room in layer and other in layer and layer[other] < layer[room]
    )


def test_the_main_rooms_import_downward_only() -> None:
    """commands -> evaluation/simulate -> loop -> strategies/executors -> jobs -> benchmarks
    -> sandbox+gateway -> store."""
    assert upward_imports(room_graph()) == [], "move the code (or the import) down a room"


def test_no_room_imports_the_commands() -> None:
    # `python -m dgm` (dgm/__main__.py) is an entry point like the console script.
    graph = room_graph()
    importers = sorted(m for m, targets in graph.items() if COMMANDS in targets and m != "__main__")
    assert importers == [], f"{importers} import dgm.commands: move that logic below it"


def test_no_file_is_over_400_lines() -> None:
    big = {
        str(p.relative_to(DGM.parent)): n
        for p in DGM.rglob("*.py")
        if (n := p.read_text().count("\n")) > MAX_LINES
    }
    assert big == {}, f"split these files (at most {MAX_LINES} lines each): {big}"


def test_sql_only_in_the_store() -> None:
    outside = sorted(
        str(p.relative_to(DGM.parent))
        for p in DGM.rglob("*.py")
        if _room(_module(p)) != "store" and SQL.search(p.read_text())
    )
    assert outside == [], f"SQL outside dgm/store: {outside}; add a query method to Run"


def test_the_checks_catch_what_they_claim(tmp_path: Path) -> None:
    """The rules fire on a tree that breaks them (so the tests above can fail)."""
    fake = tmp_path / "dgm"
    (fake / "a").mkdir(parents=True)
    (fake / "b").mkdir()
    (fake / "a" / "x.py").write_text("from dgm.b import y\n")
    (fake / "b" / "y.py").write_text("from ..a import x\n")
    edges = room_graph(fake)
    assert edges == {"a": {"b"}, "b": {"a"}}
    with pytest.raises(graphlib.CycleError):
        graphlib.TopologicalSorter(edges).prepare()
    assert SQL.search('q = "SELECT id FROM nodes"') and not SQL.search("# select a node")
    assert upward_imports({"jobs": {"loop", "store"}}) == ["jobs -> loop"]
