"""The shape of agent/: small modules that say why they exist, and imports that form no cycle.

The layers themselves (no asyncio in the core, wires apart, the runtime naming no wire) are import-linter
contracts in ``.importlinter``, run by ``make lint``. What they cannot say is checked here, by reading the source
(no imports of it, so this stays a pure unit test):

- every module in agent/ is at most 400 lines and opens with a docstring (its one reason to change);
- the imports of agent/ form no cycle, counting those inside functions: an import may be put off to save start-up
  time (``python -m agent tokens`` needs no model), never to hide a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 400


def _modules(package: str) -> Iterator[tuple[str, Path]]:
    base = ROOT / package
    for path in sorted(base.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path


def _is_package(name: str, path: Path) -> bool:
    return path.name == "__init__.py"


def _imported(name: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules of ours one import statement names (``from a import b`` may name module ``a.b``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = name if _is_package(name, path) else name.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{node.module}" if node.module else package
    else:
        base = node.module or ""
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def _ours(module: str) -> bool:
    return module == "agent" or module.startswith(("agent.", "clients.", "testing."))


def test_every_module_is_small_and_says_why_it_exists() -> None:
    too_long: list[str] = []
    silent: list[str] = []
    for name, path in _modules("agent"):
        text = path.read_text()
        if len(text.splitlines()) > MAX_LINES:
            too_long.append(f"{name}: {len(text.splitlines())} lines")
        if text.strip() and not ast.get_docstring(ast.parse(text)):
            silent.append(name)
    assert not too_long, f"modules over {MAX_LINES} lines: {too_long}"
    assert not silent, f"modules without a docstring: {silent}"


def test_the_modules_of_agent_import_each_other_without_a_cycle_even_inside_functions() -> None:
    modules = dict(_modules("agent"))
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        edges: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges |= {module for module in _imported(name, path, node) if module in modules and module != name}
        graph[name] = edges

    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)
