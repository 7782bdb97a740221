"""The packages stack in one direction: protocol <- referee <- training, tournaments <- ladder, and no module imports
itself round; the ladder stands on the tournaments' hosting floor (``tournaments.hosting``) alone.

Every import statement of every module is read with ``ast``, those inside
functions and ``if TYPE_CHECKING:`` blocks included: a lazy import is still a
dependency, only a later one. An edge goes to the most specific module an
import names (``from referee.games import base`` is an edge to
``referee.games.base``; ``from referee.games import get_rules`` to
``referee.games``), not to the packages above it, so a package ``__init__``
that gathers its submodules does not count as a cycle with each of them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("protocol", "referee", "training", "tournaments", "ladder")
"""Lowest first: a module may import its own layer and the ones before it, never a later one."""
BESIDE = ("training", ("tournaments", "ladder"))
"""Training stands on the referee beside the competitions: neither side imports the other (``training`` is
listed before them only because LAYERS is one line)."""
COMPOSITION_ROOT = {("tournaments.cli", "ladder.cli")}
"""The one upward edge allowed: the ``famiglia`` command tree (the console script's entry) mounts
the ladder's command group; nothing else below the ladder knows it exists."""
HOSTING_FLOOR = "tournaments.hosting"
"""What any competition on the referee uses (shared/redesign.md): the ladder may import it."""
LADDER_MAY_IMPORT = (HOSTING_FLOOR, "tournaments.cli.common")
"""All the tournaments the ladder may import: the floor, and the command line's shared helpers
(one-line errors, the console), which ``famiglia ladder`` uses as every command group does."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(path): path for layer in LAYERS for path in sorted((ROOT / layer).rglob("*.py"))}


def imported(name: str, path: Path, known: set[str]) -> Iterator[tuple[str, int]]:
    """The project modules ``name`` (at ``path``) imports, with the line of each import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _project(alias.name, known, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                yield from _project(candidate if candidate in known else base, known, node.lineno)


def _project(target: str, known: set[str], line: int) -> Iterator[tuple[str, int]]:
    # ``import a.b.c`` names a.b.c; a name the project does not hold (trio, msgspec) is no edge.
    while target and target not in known:
        target = target.rpartition(".")[0]
    if target:
        yield target, line


def import_graph() -> dict[str, dict[str, int]]:
    """Each module's project imports: {module: {imported module: line}}."""
    modules = all_modules()
    known = set(modules)
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        edges = graph.setdefault(name, {})
        for target, line in imported(name, path, known):
            if target != name:
                edges.setdefault(target, line)
    return graph


def layer_of(module: str) -> int:
    return LAYERS.index(module.split(".")[0])


def upward_imports(graph: dict[str, dict[str, int]]) -> list[str]:
    return sorted(
        f"{source} (line {line}) imports {target}: {LAYERS[layer_of(source)]} sits below {LAYERS[layer_of(target)]}"
        for source, edges in graph.items()
        for target, line in edges.items()
        if layer_of(target) > layer_of(source) and (source, target) not in COMPOSITION_ROOT
    )


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_module_imports_a_higher_layer() -> None:
    assert upward_imports(import_graph()) == []


def test_training_and_the_competitions_stand_side_by_side() -> None:
    package, others = BESIDE
    assert [
        f"{source} (line {line}) imports {target}"
        for source, edges in import_graph().items()
        for target, line in edges.items()
        if source.split(".")[0] in others and target.split(".")[0] == package
    ] == []


def test_no_import_cycles_between_modules() -> None:
    assert cycles(import_graph()) == []


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def on_the_floor(module: str) -> bool:
    return within(module, HOSTING_FLOOR)


def ladder_imports_off_the_floor(graph: dict[str, dict[str, int]]) -> list[str]:
    return sorted(
        f"{source} (line {line}) imports {target}: the ladder imports only the hosting floor"
        for source, edges in graph.items()
        if within(source, "ladder")
        for target, line in edges.items()
        if within(target, "tournaments") and not any(within(target, package) for package in LADDER_MAY_IMPORT)
    )


def test_the_ladder_imports_of_the_tournaments_only_the_hosting_floor() -> None:
    assert ladder_imports_off_the_floor(import_graph()) == []


def test_the_ladder_may_import_the_hosting_floor_which_stands_below_the_tournaments_store() -> None:
    graph = import_graph()
    assert any(
        on_the_floor(target) for source, edges in graph.items() if source.startswith("ladder.") for target in edges
    )
    floor = {source: edges for source, edges in graph.items() if on_the_floor(source)}
    assert floor, "tournaments/hosting/ is missing"
    # The floor is under both competitions: it stands on the referee alone, and knows neither the
    # ladder nor anything of the tournament's own (its store, its file, its command line).
    assert [
        f"{source} (line {line}) imports {target}"
        for source, edges in floor.items()
        for target, line in edges.items()
        if within(target, "ladder") or (within(target, "tournaments") and not on_the_floor(target))
    ] == []


def test_the_graph_reader_sees_imports_inside_functions_and_relative_ones(tmp_path: Path) -> None:
    # The checks above pass only if the reader finds every kind of import; this
    # shows it on a made-up module instead of trusting that it does.
    source = tmp_path / "tournaments" / "thing.py"
    source.parent.mkdir()
    source.write_text(
        "import referee.play\n"
        "from . import sibling\n"
        "from referee.games import base, get_rules\n"
        "def later():\n"
        "    from protocol.messages import Start\n",
        encoding="utf-8",
    )
    known = {"referee.play", "tournaments.sibling", "referee.games", "referee.games.base", "protocol.messages"}
    found = {target for target, _ in imported("tournaments.thing", source, known)}
    assert found == known


def test_a_ladder_import_off_the_floor_is_reported_and_the_floor_is_not() -> None:
    graph = {
        "ladder.loop": {"tournaments.runner": 7, "tournaments.hosting.executors.choice": 8},
        "ladder.cli": {"tournaments.cli.common": 3, "tournaments.cli.tournament": 4},
        "tournaments.runner": {"tournaments.store": 1},
    }
    assert ladder_imports_off_the_floor(graph) == [
        "ladder.cli (line 4) imports tournaments.cli.tournament: the ladder imports only the hosting floor",
        "ladder.loop (line 7) imports tournaments.runner: the ladder imports only the hosting floor",
    ]


def test_an_upward_import_and_a_cycle_are_reported() -> None:
    graph = {
        "protocol.schema": {"referee.games": 3},
        "referee.games": {"referee.match": 1},
        "referee.match": {"referee.games": 2},
    }
    assert upward_imports(graph) == ["protocol.schema (line 3) imports referee.games: protocol sits below referee"]
    assert cycles(graph) == [["referee.games", "referee.match"]]
