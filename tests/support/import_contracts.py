"""An import-linter contract type (``pyproject.toml``'s ``contract_types``): no module of the
source packages imports one of their own modules by name at run time
(``importlib.import_module``, ``__import__``), which the import graph would not see, so the
other contracts could not either. A call whose module is a string naming a module outside the
source packages is fine; one whose module is computed is refused too, unless its module is
one of ``allowed_modules`` (each with its reason in the contract's comment).
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Any

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output

DYNAMIC_IMPORTS = frozenset({"import_module", "__import__"})


class NoDynamicImportsContract(Contract):
    """``source_packages``: the packages checked and whose modules may not be imported by
    name; ``allowed_modules``: modules that may (a package's lazy names of its own
    submodules)."""

    source_packages = fields.ListField(subfield=fields.StringField())
    allowed_modules = fields.ListField(subfield=fields.StringField(), required=False)

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        packages: list[str] = list(self.source_packages)
        allowed = set(self.allowed_modules or [])
        found: list[dict[str, Any]] = []
        for package in packages:
            for module in sorted(graph.find_descendants(package) | {package}):
                if module in allowed:
                    continue
                path = _module_path(module)
                if path is None:
                    continue
                for line, target in dynamic_imports(path.read_text(encoding="utf-8")):
                    if target is None or _inside(target, packages):
                        found.append({"module": module, "line": line, "target": target})
        return ContractCheck(kept=not found, metadata={"found": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for item in check.metadata["found"]:
            target = item["target"] or "a module computed at run time"
            output.print_error(
                f"{item['module']}:{item['line']} imports {target} by name "
                "(import it, or load it in haf_tui.methods.loader)",
                bold=False,
            )
            output.new_line()


def dynamic_imports(source: str) -> list[tuple[int, str | None]]:
    """Each ``import_module(…)`` / ``__import__(…)`` call of ``source``: its line and the
    module it names (None: not a string literal)."""
    calls: list[tuple[int, str | None]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name not in DYNAMIC_IMPORTS:
            continue
        first = node.args[0] if node.args else None
        literal = isinstance(first, ast.Constant) and isinstance(first.value, str)
        calls.append((node.lineno, first.value if literal else None))
    return calls


def _inside(module: str, packages: list[str]) -> bool:
    return module.startswith(".") or any(
        module == p or module.startswith(f"{p}.") for p in packages
    )


def _module_path(module: str) -> Path | None:
    """The source file of ``module``, found from its root package's folder (nothing of the
    package is imported)."""
    root, _, rest = module.partition(".")
    spec = importlib.util.find_spec(root)
    if spec is None or not spec.submodule_search_locations:
        return None
    base = Path(next(iter(spec.submodule_search_locations)))
    parts = rest.split(".") if rest else []
    if not parts:
        return base / "__init__.py"
    for candidate in (
        base.joinpath(*parts).with_suffix(".py"),
        base.joinpath(*parts, "__init__.py"),
    ):
        if candidate.is_file():
            return candidate
    return None
