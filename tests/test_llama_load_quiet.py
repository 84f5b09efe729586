"""Loading a GGUF leaves the process's output alone: llama-cpp-python at ``verbose=False``
pointed descriptors 1 and 2 and ``sys.stdout``/``sys.stderr`` at /dev/null for the whole
process while it loaded, and what another thread printed meanwhile was lost (a campaign lane's
line, a workbench frame). haf loads at ``verbose=True`` with llama.cpp's lines kept in memory
and llama-cpp-python's own messages not shown: a line printed during the load is kept, and the
load prints nothing."""

from __future__ import annotations

import ast
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from haf_tui.defaults import embedded_model_path
from haf_tui.inference import llama_load
from haf_tui.inference.llama_load import (
    LLAMA_CPP_MODULES_THAT_PRINT,
    open_llama,
    quiet_llama_cpp,
    recent_llama_log,
)
from haf_tui.inference.llama_model import LlamaModel


@pytest.fixture(autouse=True)
def llama_cpp_python_printing_as_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with llama-cpp-python's modules printing as installed: a quieting an
    earlier test (or test file) left in the process does not stand in for the load's own."""
    import llama_cpp  # noqa: F401  (the modules that print, imported)

    for name in LLAMA_CPP_MODULES_THAT_PRINT:
        module = sys.modules.get(name)
        if module is not None and "print" in vars(module):
            monkeypatch.delattr(module, "print")


def _print_from_another_thread(when: str) -> None:
    """A line to descriptor 1 and one through ``sys.stdout``, from a thread of their own (as
    Textual's writer thread or a campaign lane prints while a worker loads a model)."""

    def write() -> None:
        os.write(1, f"descriptor 1 {when}\n".encode())
        sys.stdout.write(f"sys.stdout {when}\n")
        sys.stdout.flush()

    writer = threading.Thread(target=write)
    writer.start()
    writer.join()


@pytest.fixture
def printing_during_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """llama.cpp's load of the weights (the call llama-cpp-python silenced) starts by having
    another thread print: the lines are printed while the load is under way, every time."""
    import llama_cpp

    c_api = llama_cpp.llama_cpp
    load_from_file = c_api.llama_model_load_from_file

    def load_while_another_thread_prints(*args: Any) -> Any:
        _print_from_another_thread("during the load")
        return load_from_file(*args)

    monkeypatch.setattr(c_api, "llama_model_load_from_file", load_while_another_thread_prints)


@pytest.mark.real_model
@pytest.mark.parametrize("vocab_only", [False, True], ids=["weights", "tokenizer only"])
def test_lines_printed_while_a_model_loads_are_kept_and_the_load_prints_nothing(
    capfd: pytest.CaptureFixture[str],
    printing_during_loads: None,
    vocab_only: bool,
    opened: list[Any],
) -> None:
    capfd.readouterr()
    model = LlamaModel(embedded_model_path(), n_ctx=256, n_gpu_layers=0, vocab_only=vocab_only)
    opened.append(model.llm)
    _print_from_another_thread("after the load")
    model.llm.close()
    out, err = capfd.readouterr()
    assert sorted(out.splitlines()) == [
        "descriptor 1 after the load",
        "descriptor 1 during the load",
        "sys.stdout after the load",
        "sys.stdout during the load",
    ]
    assert err == ""


@pytest.mark.real_model
def test_llama_cpp_python_s_own_completion_prints_nothing(
    capfd: pytest.CaptureFixture[str], opened: list[Any]
) -> None:
    """A completion through llama-cpp-python itself (what ``haf serve`` answers with): at
    ``verbose=True`` it prints its timings through llama.cpp's log, and its messages through
    ``print``; none reaches the terminal."""
    capfd.readouterr()
    llm = open_llama(embedded_model_path(), n_ctx=256, n_gpu_layers=0)
    opened.append(llm)
    llm.create_completion("The sea is", max_tokens=2, temperature=0.0)
    llm.close()
    assert capfd.readouterr() == ("", "")
    # (its timings are llama.cpp's info lines: not shown, and not kept among the warnings)
    assert not any(line.startswith("llama_perf_context_print:") for line in recent_llama_log())


def test_the_llama_cpp_log_levels_kept_are_unchanged() -> None:
    """The collector keeps the lines llama.cpp logs as warnings and errors (ggml's levels 3
    and 4) and drops the others: info (2) filled it with the loader's metadata and a failed
    load was named by "print_info: file size …", not by its error."""
    quiet_llama_cpp()
    marker = f"line {os.getpid()}-{id(object())} at level"
    for level in range(6):
        llama_load._LOG_CALLBACK(level, f"{marker} {level}\n".encode(), None)
    kept = [line for line in recent_llama_log() if line.startswith(marker)]
    assert kept == [f"{marker} 3", f"{marker} 4"]


def _modules_printing_when_verbose(package: Path) -> set[str]:
    """The modules of the installed llama-cpp-python that call ``print`` under an ``if``
    whose test reads a ``verbose``."""

    def reads_verbose(test: ast.expr) -> bool:
        return any(
            (isinstance(node, ast.Attribute) and node.attr == "verbose")
            or (isinstance(node, ast.Name) and node.id == "verbose")
            for node in ast.walk(test)
        )

    found = set()
    for source in package.rglob("*.py"):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for branch in ast.walk(tree):
            if isinstance(branch, ast.If) and reads_verbose(branch.test):
                calls = (n for b in branch.body for n in ast.walk(b) if isinstance(n, ast.Call))
                if any(isinstance(c.func, ast.Name) and c.func.id == "print" for c in calls):
                    relative = source.relative_to(package.parent).with_suffix("")
                    found.add(".".join(relative.parts))
    return found


def test_every_llama_cpp_python_module_printing_when_verbose_is_quieted() -> None:
    """An upgrade of llama-cpp-python that prints from another module at ``verbose=True``
    is caught here, not on a user's terminal."""
    import llama_cpp

    printing = _modules_printing_when_verbose(Path(llama_cpp.__file__).parent)
    assert "llama_cpp.llama" in printing  # (the reading finds what it looks for)
    assert printing <= set(LLAMA_CPP_MODULES_THAT_PRINT), printing


@pytest.mark.real_model
def test_haf_serve_s_load_keeps_other_lines_and_prints_nothing(
    capfd: pytest.CaptureFixture[str], printing_during_loads: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``haf serve`` loads through llama-cpp-python's server (its ``verbose`` setting)."""
    pytest.importorskip("uvicorn", reason="llama-cpp-python's [server] extra is missing")
    import llama_cpp.server.app as server_app

    from haf_tui.inference.serve import ServeSettings, create_serve_app

    for name in ("get_llama_proxy", "_llama_proxy"):  # (module state the app sets: restored)
        monkeypatch.setattr(server_app, name, getattr(server_app, name))

    capfd.readouterr()
    create_serve_app(ServeSettings(embedded_model_path(), 0, 1, 256, 1))
    out, err = capfd.readouterr()
    assert sorted(out.splitlines()) == [
        "descriptor 1 during the load",
        "sys.stdout during the load",
    ]
    assert err == ""
