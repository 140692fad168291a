"""The import rules of the house, checked with `ast`: the data flows one way.

`graph` (the supervisor) uses `workers`; `workers` use the hub; the hub reaches `servers` only
over MCP. The shell (`graph/app`) uses the supervisor, never the other way round. Two
exceptions on purpose: the graph imports `servers.approval`, the orders server's published
approval-token format; and the graph and the workers import `servers.digests`, the one module
of digests (the action digest a token covers, and the content, short and replay digests the
workers take), so that a digest taken on either side of MCP is the same. A write server
cannot import the workers and the workers must not import a server, so the one copy lives on
the servers' side as a leaf: it imports the standard library only (checked below), so
importing it brings nothing of a server along.

A domain pack (`domains/<name>/`) sits beside the graph: it may use the supervisor's
contracts and helpers and the workers, never the shell, the store or the servers; the graph
reaches a pack only through its loader (`graph.domains`), and nothing below it (workers,
servers, checkpoints) knows packs exist.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imports_of(path: Path) -> set[str]:
    """Every module a file imports (absolute imports only: relative ones are a domain pack's
    own modules importing each other)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def modules(package: str) -> dict[str, set[str]]:
    """`{file: imports}` for every Python file under a top-level package."""
    return {
        str(path.relative_to(ROOT)): imports_of(path)
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def under(module: str, packages: tuple[str, ...]) -> bool:
    """True when `module` is one of `packages` or inside one (`graph.app` holds
    `graph.app.cli`, not `graph.approval`)."""
    return any(module == p or module.startswith(p + ".") for p in packages)


def offenders(
    package: str, forbidden: tuple[str, ...], allowed: tuple[str, ...] = ()
) -> list[tuple[str, str]]:
    return [
        (name, module)
        for name, found in modules(package).items()
        for module in sorted(found)
        if under(module, forbidden) and not under(module, allowed)
    ]


def test_servers_import_nothing_of_ours() -> None:
    assert offenders("servers", ("graph", "workers", "checkpoints", "domains")) == []


DIGESTS = "servers.digests"
"""The one module of digests, which the workers and the graph may import (see above)."""


def test_workers_never_import_the_graph_or_the_store() -> None:
    forbidden = ("graph", "checkpoints", "servers", "domains")
    assert offenders("workers", forbidden, allowed=(DIGESTS,)) == []


def test_the_digest_module_is_a_standard_library_leaf() -> None:
    """What the workers may import of the servers imports nothing but the standard library:
    no server, no MCP SDK, nothing of ours."""
    found = imports_of(ROOT / "servers" / "digests.py")
    assert found and {m for m in found if m.split(".")[0] not in sys.stdlib_module_names} == set()


def test_the_hub_imports_no_other_worker_module() -> None:
    bad = [
        (name, module)
        for name, found in modules("workers").items()
        if name.startswith("workers/hub/")
        for module in found
        if module.startswith("workers.")
        and not module.startswith(
            ("workers.hub", "workers.errors", "workers.contracts", "workers.processes")
        )
    ]
    assert bad == []


def test_the_supervisor_never_imports_the_shell() -> None:
    bad = [
        (name, module)
        for name, found in modules("graph").items()
        if not name.startswith("graph/app/")
        for module in found
        if module == "graph.app" or module.startswith("graph.app.")
    ]
    assert bad == []


def test_the_graph_reaches_servers_only_through_the_token_format() -> None:
    assert offenders("graph", ("servers",), allowed=("servers.approval", DIGESTS)) == []


def test_checkpoints_never_import_the_graph() -> None:
    assert offenders("checkpoints", ("graph", "servers", "domains")) == []


def test_the_graph_reaches_domain_packs_only_through_the_loader() -> None:
    found = {
        name: {m for m in imports if m == "domains" or m.startswith("domains.")}
        for name, imports in modules("graph").items()
    }
    assert {name: mods for name, mods in found.items() if mods} == {}


def test_domain_packs_never_import_the_shell_the_store_or_the_servers() -> None:
    assert offenders("domains", ("graph.app", "checkpoints", "servers")) == []


def test_the_rules_catch_a_violation(tmp_path: Path) -> None:
    """The checker itself can fail: a file importing the shell is found."""
    bad = tmp_path / "bad.py"
    bad.write_text("from graph.app.cli import main\nimport servers.orders\n", encoding="utf-8")
    assert imports_of(bad) == {"graph.app.cli", "servers.orders"}
    assert under("graph.app.cli", ("graph.app",)) and under("servers", ("servers",))
    assert not under("graph.approval", ("graph.app",))  # a sibling, not inside the shell


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path, files: dict[str, Path]) -> set[str]:
    """The modules a file imports, `from pkg import mod` naming `pkg.mod` where that is one."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if full in files else node.module)
    return found


def import_cycles(
    packages: tuple[str, ...] = ("graph", "workers", "checkpoints", "servers"),
) -> list[list[str]]:
    """Groups of our modules that import each other, directly or round a loop (imports made
    inside a function count: a lazy import is still a cycle); Tarjan's strongly connected
    components of the import graph, each of more than one module."""
    files = {
        _module_name(path): path for package in packages for path in (ROOT / package).rglob("*.py")
    }
    edges: dict[str, set[str]] = {}
    for name, path in files.items():
        targets: set[str] = set()
        for imported in _imported(path, files):
            # `from graph.app import cli` names a module; `from graph.app.cli import main` too.
            while imported and imported not in files:
                imported = imported.rpartition(".")[0]
            if imported and imported != name and not name.startswith(imported + "."):
                targets.add(imported)
        edges[name] = targets
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in edges[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return cycles


def test_no_module_imports_itself_round_a_loop() -> None:
    # A package's __init__ re-exporting its modules is not counted: importing the package
    # imports them, not the other way round (the walk up to the parent stops at the package).
    assert import_cycles() == []


def test_the_cycle_check_finds_a_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("def f():\n    from pkg.b import g\n")
    (tmp_path / "pkg" / "b.py").write_text("from pkg import a\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert import_cycles(("pkg",)) == [["pkg.a", "pkg.b"]]


MAX_MODULE_LINES = 400
"""Issue 26: no module of the engine, the workers or the store grows past this."""


def test_no_engine_module_is_over_400_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for package in ("graph", "workers", "checkpoints")
        for path in sorted((ROOT / package).rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}
