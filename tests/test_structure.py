"""The shape of dgm/: its rooms (subpackages and top-level modules) import one way, its
files import each other without a circle and use no other module's private names, no
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


def _modules(root: Path = DGM) -> dict[str, Path]:
    return {_module(p, root): p for p in root.rglob("*.py")}


def _imported_names(path: Path, root: Path = DGM) -> list[tuple[str, str | None]]:
    """(module, name) for every import in the file, at any depth (inside functions too):
    `from m import n` -> (m, n), `import m` -> (m, None); relative imports resolved."""
    module = _module(path, root)
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.extend((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".")
                keep = len(package) - node.level + (1 if path.name == "__init__.py" else 0)
                base = ".".join(package[:keep] + ([node.module] if node.module else []))
            found.extend((base, alias.name) for alias in node.names)
    return found


def file_graph(root: Path = DGM) -> dict[str, set[str]]:
    """Module -> the modules of dgm/ it imports. `from pkg import mod` is an edge to the
    module `pkg.mod`; an import of a package a module lives in is not an edge (Python runs
    that package's `__init__` first whatever the module imports)."""
    modules = _modules(root)
    edges: dict[str, set[str]] = {}
    for module, path in modules.items():
        for target, name in _imported_names(path, root):
            dest = f"{target}.{name}" if f"{target}.{name}" in modules else target
            if dest in modules and dest != module and not module.startswith(dest + "."):
                edges.setdefault(module, set()).add(dest)
    return edges


def private_imports(root: Path = DGM) -> list[str]:
    """`from other import _name`: a name another module keeps to itself (dunders aside)."""
    modules = _modules(root)
    found = []
    for module, path in modules.items():
        for target, name in _imported_names(path, root):
            if not target.startswith("dgm") or name is None or f"{target}.{name}" in modules:
                continue
            if name.startswith("_") and not name.startswith("__") and target != module:
                found.append(f"{module} imports {name} from {target}")
    return sorted(found)


def test_files_import_each_other_in_one_direction_only() -> None:
    """No circle between files, imports inside functions included: each module can be
    read knowing only what it imports."""
    try:
        graphlib.TopologicalSorter(file_graph()).prepare()
    except graphlib.CycleError as exc:
        pytest.fail("files of dgm/ import each other in a circle: " + " -> ".join(exc.args[1]))


def test_no_private_name_is_imported_from_another_module() -> None:
    assert private_imports() == [], "make the name public (and say what it is for), or move it"


def test_the_readme_layout_names_every_room() -> None:
    """README.md's Layout lists each subpackage of dgm/ (`  name/`), and only those."""
    readme = (DGM.parent / "README.md").read_text()
    layout = readme.split("## Layout", 1)[1].split("```")[1]
    listed = set(re.findall(r"^  ([a-z_]+)/ ", layout, re.M))
    rooms = {p.parent.name for p in DGM.glob("*/__init__.py")} | {
        p.name for p in DGM.iterdir() if p.is_dir() and any(p.glob("*.py"))
    }
    assert listed == rooms, f"README.md Layout: add {rooms - listed}, drop {listed - rooms}"


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


def test_the_file_checks_catch_what_they_claim(tmp_path: Path) -> None:
    """A circle closed by an import inside a function, and a private name imported from
    another module, are both caught; a package re-exporting its own modules is no circle."""
    fake = tmp_path / "dgm"
    (fake / "a").mkdir(parents=True)
    (fake / "a" / "__init__.py").write_text("from dgm.a.x import run\n")
    (fake / "a" / "x.py").write_text("from dgm.a import y\n\ndef run():\n    return y\n")
    (fake / "a" / "y.py").write_text("def later():\n    from .x import _helper\n")
    assert file_graph(fake) == {
        "dgm.a": {"dgm.a.x"},
        "dgm.a.x": {"dgm.a.y"},
        "dgm.a.y": {"dgm.a.x"},
    }
    with pytest.raises(graphlib.CycleError):
        graphlib.TopologicalSorter(file_graph(fake)).prepare()
    assert private_imports(fake) == ["dgm.a.y imports _helper from dgm.a.x"]
