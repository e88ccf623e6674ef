"""The shape of agent/: small modules that say why they exist, and imports that form no cycle.

The layers themselves (no asyncio in the core, wires apart, the runtime naming no wire) are import-linter
contracts in ``.importlinter``, run by ``make lint``. What they cannot say is checked here, by reading the source
(no imports of it, so this stays a pure unit test):

- every module in agent/ is at most 400 lines and opens with a docstring (its one reason to change);
- the imports of agent/ form no cycle, counting those inside functions: an import may be put off to save start-up
  time (``python -m agent tokens`` needs no model), never to hide a cycle;
- nor do agent's top-level packages (``agent.config``, ``agent.wires``, ``agent.errors``...), counting the same
  imports: a package that imports another is below it, whichever of its modules does it. The ``layers`` contract
  says in which order; this says, independently of it, that some order exists, and names every arrow of a loop
  with the module and line that draws it;
- bench/ is held to the same size and docstring rule, and its modules (the end-of-turn package ``bench/turns/``
  among them) import each other without a cycle, counted the same way.
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


def _imports(package: str = "agent") -> dict[str, dict[str, int]]:
    """Every module of ``package`` -> the modules of ``package`` it imports (anywhere: in a function, under
    ``TYPE_CHECKING``) -> the line of the first import that names each."""
    modules = dict(_modules(package))
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for module in _imported(name, path, node):
                    if module in modules and module != name:
                        edges[module] = min(edges.get(module, node.lineno), node.lineno)
        graph[name] = edges
    return graph


def _package(module: str) -> str:
    """The top-level package (or module) of agent/ that ``module`` belongs to: ``agent.wires.phone.ids`` ->
    ``agent.wires``; ``agent`` itself for the package's own ``__init__``."""
    return ".".join(module.split(".")[:2])


def _cycles(imports: dict[str, dict[str, int]]) -> list[list[str]]:
    """The import cycles of a graph made by ``_imports``, each as the modules around it."""
    graph = {name: set(edges) for name, edges in imports.items()}
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
    return cycles


def test_the_modules_of_agent_import_each_other_without_a_cycle_even_inside_functions() -> None:
    cycles = _cycles(_imports())
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


def test_the_modules_of_bench_import_each_other_without_a_cycle_even_inside_functions() -> None:
    """A bench's steps (``bench/turns/``: its sets, runs, report, seal and command) import downwards only: the
    command imports the runs, never the other way round, even inside a function."""
    imports = _imports("bench")
    assert "bench.stats" in imports  # the graph is read from the right place
    cycles = _cycles(imports)
    assert not cycles, "import cycles in bench: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


def test_the_packages_of_agent_import_each_other_without_a_loop_even_inside_functions() -> None:
    arrows: dict[tuple[str, str], list[str]] = {}  # (importer, imported) -> where: "module:line"
    for name, edges in _imports().items():
        for module, line in edges.items():
            source, target = _package(name), _package(module)
            if source != target:
                arrows.setdefault((source, target), []).append(f"{name}:{line} -> {module}")
    below: dict[str, set[str]] = {}
    for source, target in arrows:
        below.setdefault(source, set()).add(target)

    def reaches(start: str) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for target in below.get(todo.pop(), ()):
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return seen

    reach = {package: reaches(package) for package in below}
    looped = sorted((source, target) for source, target in arrows if source in reach.get(target, set()))
    assert not looped, "arrows between packages that sit in a loop: " + "; ".join(
        f"{source} -> {target} ({', '.join(sorted(arrows[source, target]))})" for source, target in looped
    )


def test_every_bench_module_is_small_and_says_why_it_exists() -> None:
    """bench/ is held to agent/'s rule (issue 31): a bench too big for one reason to change is split (its sets,
    its runner, its report), and what benches share lives once (``bench.stats``, ``bench.progress``,
    ``bench.speech``, ``bench.server``)."""
    too_long: list[str] = []
    silent: list[str] = []
    for path in sorted((ROOT / "bench").rglob("*.py")):
        text = path.read_text()
        name = str(path.relative_to(ROOT))
        if len(text.splitlines()) > MAX_LINES:
            too_long.append(f"{name}: {len(text.splitlines())} lines")
        if not ast.get_docstring(ast.parse(text)):
            silent.append(name)
    assert not too_long, f"bench modules over {MAX_LINES} lines: {too_long}"
    assert not silent, f"bench modules without a docstring: {silent}"
