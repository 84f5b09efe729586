"""The methods in one object (issue 35 §1): a program loads them once where it starts
(:func:`haf_tui.methods.loader.load_methods`) and installs the :class:`MethodRegistry`, which
hands what they contribute to the layers below; those never load a method themselves. A
config is checked with no method loaded, a registry installed replaces all an earlier one
handed over (nothing leaks from one test to the next), and no module of haf imports one of its
own by name at run time."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import grimp
import pytest
from pydantic import BaseModel, Field, ValidationError

from haf_tui.config import SETTINGS_MODELS, RunConfig
from haf_tui.methods import registry as method_registry_module
from haf_tui.methods.declare import MetricSpec
from haf_tui.methods.loader import load_methods
from haf_tui.methods.registry import (
    MethodLoadError,
    MethodRegistry,
    MethodsNotLoadedError,
    installed,
    methods,
)
from haf_tui.reports import queries
from haf_tui.reports.compared_metrics import declared_metrics
from haf_tui.reports.registry import REPORTS, Report, get_report
from haf_tui.store.method_tables import registered_method_migrations
from tests.support.import_contracts import dynamic_imports
from tests.test_method_tables import SCORES, toy

ROOT = Path(__file__).resolve().parents[1]

CONFIG_ALONE = """
import json, sys
from pydantic import BaseModel, Field, ValidationError
from haf_tui.config import RunConfig

class ToySettings(BaseModel):
    word: str = "toxic"
    max_new_tokens: int = Field(6, ge=1, le=32)

class Methods:
    settings_models = {"toy": ToySettings}

data = {"suites": ["toy"], "settings": {"toy": {"max_new_tokens": 9}}}
checked = RunConfig.model_validate(data, context={"methods": Methods()})
plain = RunConfig.model_validate(data)
try:
    RunConfig.model_validate(
        {**data, "settings": {"toy": {"max_new_tokens": 99}}}, context={"methods": Methods()}
    )
    refused = []
except ValidationError as error:
    refused = [".".join(map(str, e["loc"])) for e in error.errors()]
print("RESULT " + json.dumps({
    "checked": checked.settings, "plain": plain.settings, "refused": refused,
    "loaded": sorted(m for m in sys.modules if m.startswith("haf_tui")),
}))
"""


def test_a_config_is_checked_without_loading_any_method(tmp_path: Path) -> None:
    """Importing the config and validating a suite's settings (against the models a
    validation context gives) loads no method, nor the reports or the store."""
    env = os.environ | {"HAF_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", CONFIG_ALONE],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.rsplit("RESULT ", 1)[-1])
    assert result["checked"] == {"toy": {"word": "toxic", "max_new_tokens": 9}}
    assert result["plain"] == {"toy": {"max_new_tokens": 9}}  # no models given: plain data
    assert result["refused"] == ["max_new_tokens"]
    assert result["loaded"] == ["haf_tui", "haf_tui.config"]


class ToySettings(BaseModel):
    """A setting of the test's own method."""

    word_cap: int = Field(6, ge=1, le=32, description="cap of the one-word answer")


TOY_REPORT = Report(name="toy-lengths", title="Toy lengths", query="toy_lengths")
TOY_METRIC = MetricSpec(name="toy_length", label="toy length", definition="an answer's length")


def _toy_registry(base: MethodRegistry, queries_dir: Path) -> MethodRegistry:
    method = dataclasses.replace(
        toy(SCORES),
        settings=ToySettings,
        flag_prefix="toy",
        reports=(TOY_REPORT,),
        queries_dir=queries_dir,
        metrics=(TOY_METRIC,),
    )
    return base.with_method(method)


def test_a_registry_installed_replaces_what_the_last_one_handed_over(
    method_registry: MethodRegistry, tmp_path: Path
) -> None:
    with_toy = _toy_registry(method_registry, tmp_path).install()
    assert installed() is with_toy and "toy" in methods()
    assert SETTINGS_MODELS["toy"] is ToySettings
    assert get_report("toy-lengths") is TOY_REPORT
    assert tmp_path in queries.METHOD_QUERY_DIRS
    assert registered_method_migrations()["toy"] == (SCORES,)
    assert TOY_METRIC in declared_metrics(["toy"])
    assert RunConfig(suites=("toy",)).settings["toy"] == {"word_cap": 6}

    method_registry.install()  # the session's, which has no toy: nothing of it is left
    assert "toy" not in methods() and "toy" not in SETTINGS_MODELS
    assert "toy-lengths" not in REPORTS
    assert tmp_path not in queries.METHOD_QUERY_DIRS
    assert "toy" not in registered_method_migrations()
    assert declared_metrics(["toy"]) == []
    assert RunConfig(suites=("haf",), settings={"toy": {"word_cap": 99}}).settings["toy"] == {
        "word_cap": 99
    }
    assert set(methods()) >= {"haf", "classify", "rationales", "judge"}


def test_a_registry_checks_a_config_against_its_own_methods(
    method_registry: MethodRegistry, tmp_path: Path
) -> None:
    """``check_config`` reads the settings models of the registry it is asked of, installed
    or not."""
    with_toy = _toy_registry(method_registry, tmp_path)
    assert installed() is method_registry
    config = with_toy.check_config({"suites": ["haf", "toy"]})
    assert config.settings["toy"] == {"word_cap": 6} and "prompting" in config.settings["haf"]
    with pytest.raises(ValidationError, match="word_cap"):
        with_toy.check_config({"suites": ["toy"], "settings": {"toy": {"word_cap": 0}}})


def test_a_method_that_cannot_stand_beside_the_others_is_refused(
    method_registry: MethodRegistry, tmp_path: Path
) -> None:
    """A report name of haf's own, or of another method, is refused, and the registry asked
    is left as it was."""
    with_toy = _toy_registry(method_registry, tmp_path)
    for name in ("compare", "table1"):
        taken = Report(name=name, title="mine", query="toy_lengths")
        with pytest.raises(MethodLoadError, match=f"reuses the report name.*{name}"):
            with_toy.with_method(dataclasses.replace(with_toy.methods["toy"], reports=(taken,)))
    assert with_toy.methods["toy"].reports == (TOY_REPORT,)


def test_the_methods_asked_for_before_they_are_loaded_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(method_registry_module, "_installed", None)
    with pytest.raises(MethodsNotLoadedError, match="load_methods"):
        methods()


def test_loading_the_methods_gives_a_fresh_registry_each_time(
    method_registry: MethodRegistry,
) -> None:
    again = load_methods(install=False)
    assert again is not method_registry and installed() is method_registry
    assert list(again.methods) == list(method_registry.methods)


def test_no_module_of_haf_imports_one_of_its_own_by_name() -> None:
    """What the import contract checks (``lint-imports``), here too: only the store's package
    names its own submodules lazily, the loader imports the built-in methods from the names
    ``haf_tui.methods`` lists, and the parts a method declares by path are imported by one
    module."""
    found = {}
    for path in sorted((ROOT / "haf_tui").rglob("*.py")):
        calls = dynamic_imports(path.read_text(encoding="utf-8"))
        if calls:
            found[str(path.relative_to(ROOT))] = calls
    assert list(found) == [
        "haf_tui/methods/declared_parts.py",
        "haf_tui/methods/loader.py",
        "haf_tui/store/__init__.py",
    ], found
    assert dynamic_imports('import importlib\nimportlib.import_module("haf_tui.x")\n') == [
        (2, "haf_tui.x")
    ]
    assert dynamic_imports("m = __import__(name)\n") == [(1, None)]


def _circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every set of modules that import each other in a circle (Tarjan's components of more
    than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(graph.find_modules_directly_imported_by(module)):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                other = stack.pop()
                component.append(other)
                if other == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_circle_runs_through_the_config_methods_reports_or_store() -> None:
    """At run time (``TYPE_CHECKING`` imports aside) no circle of imports passes through the
    config, the methods, the reports or the store: the registry is filled from above."""
    graph = grimp.build_graph("haf_tui", exclude_type_checking_imports=True)
    lower = ("haf_tui.config", "haf_tui.methods", "haf_tui.reports", "haf_tui.store")
    through = [
        circle
        for circle in _circles(graph)
        if any(m == p or m.startswith(f"{p}.") for m in circle for p in lower)
    ]
    assert through == []
