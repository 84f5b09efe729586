"""No import circle among haf_tui's modules at runtime: the graph of module-level imports
(those a module runs when it is imported; not the ones under ``if TYPE_CHECKING:``, not the
ones inside a function) has no cycle. A circle makes the order modules are first imported in
matter, and hides which of two modules is the lower one."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "haf_tui"


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements a module runs on import: its top level, and the blocks of its ``if``,
    ``try`` and ``with`` statements, but not an ``if TYPE_CHECKING:`` block (its ``else`` is
    run), nor the bodies of functions and classes' methods."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.If):
            if not _is_type_checking(statement.test):
                yield from _runtime_statements(statement.body)
            yield from _runtime_statements(statement.orelse)
        elif isinstance(statement, ast.Try):
            for block in (statement.body, statement.orelse, statement.finalbody):
                yield from _runtime_statements(block)
            for handler in statement.handlers:
                yield from _runtime_statements(handler.body)
        elif isinstance(statement, ast.With | ast.ClassDef):
            yield from _runtime_statements(statement.body)


def runtime_imports(path: Path, modules: set[str], root: Path = PACKAGE) -> set[str]:
    """The package's modules ``path`` imports when it is imported (the most specific module
    each import names: ``from a.b import c`` is ``a.b.c`` when that is a module, else
    ``a.b``)."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for statement in _runtime_statements(ast.parse(path.read_text(encoding="utf-8")).body):
        if isinstance(statement, ast.Import):
            found.update(alias.name for alias in statement.names if alias.name in modules)
        elif isinstance(statement, ast.ImportFrom):
            if statement.level:
                base = package.split(".")[: len(package.split(".")) - statement.level + 1]
                target = ".".join([*base, *([statement.module] if statement.module else [])])
            else:
                target = statement.module or ""
            for alias in statement.names:
                if f"{target}.{alias.name}" in modules:
                    found.add(f"{target}.{alias.name}")
                elif target in modules:
                    found.add(target)
    found.discard(name)
    return found


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    paths = {module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    return {name: runtime_imports(path, set(paths), root) for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected component of more than one module (Tarjan's
    algorithm, iterative), each as the path ``a → b → … → a``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(component)
    return [_a_cycle(graph, component) for component in components]


def _a_cycle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest cycle through the component's first module (breadth first)."""
    first = min(component)
    came_from: dict[str, str] = {}
    queue = [first]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & component):
            if child == first:
                path = [node]
                while path[-1] != first:
                    path.append(came_from[path[-1]])
                return [first, *reversed(path[:-1]), first] if node != first else [first, first]
            if child not in came_from:
                came_from[child] = node
                queue.append(child)
    raise AssertionError(f"no cycle in {sorted(component)}")


def test_no_module_of_haf_tui_imports_itself_back_at_runtime() -> None:
    found = cycles(import_graph())
    assert not found, "import circles (module-level imports, outside TYPE_CHECKING):\n" + (
        "\n".join(" → ".join(cycle) for cycle in found)
    )


def test_the_check_sees_a_circle_and_ignores_type_checking_and_function_imports(
    tmp_path: Path,
) -> None:
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "__init__.py").write_text("")
    (root / "a.py").write_text("from pkg.sub import b\n")
    (root / "sub" / "b.py").write_text(
        "try:\n    from .. import c\nexcept ImportError:\n    pass\n"
    )
    (root / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.d\n"
        "def f():\n    import pkg.d\nimport pkg.a\n"
    )
    (root / "d.py").write_text("import pkg.c\n")
    graph = import_graph(root)
    assert graph["pkg.a"] == {"pkg.sub.b"} and graph["pkg.sub.b"] == {"pkg.c"}
    assert graph["pkg.c"] == {"pkg.a"} and graph["pkg.d"] == {"pkg.c"}
    assert cycles(graph) == [["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]]
    (root / "c.py").write_text("if not TYPE_CHECKING:\n    pass\nelse:\n    import pkg.a\n")
    assert cycles(import_graph(root)) == [["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]]
    (root / "c.py").write_text("")
    assert cycles(import_graph(root)) == []
    (root / "c.py").write_text("import pkg.d\n")  # two modules importing each other
    assert cycles(import_graph(root)) == [["pkg.c", "pkg.d", "pkg.c"]]
