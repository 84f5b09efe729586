"""Install the toy plug-in method (tests/support/plugin_toy) the way a researcher's package
installs: copied into a folder of its own with a ``.dist-info`` whose ``entry_points.txt``
names it in the ``haf_tui.methods`` group, the folder on ``sys.path`` (and on
``PYTHONPATH`` for child processes)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SOURCE = Path(__file__).parent / "plugin_toy" / "toy_method"
ENTRY_POINTS = "[haf_tui.methods]\ntoy = toy_method.method:METHOD\n"
METADATA = "Metadata-Version: 2.1\nName: toy-method\nVersion: 0.1\n"


def install_toy(site: Path) -> Path:
    """The toy package and its distribution metadata written under ``site``."""
    site.mkdir(parents=True, exist_ok=True)
    shutil.copytree(SOURCE, site / "toy_method", ignore=shutil.ignore_patterns("__pycache__"))
    info = site / "toy_method-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(METADATA)
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return site


@contextmanager
def toy_installed(site: Path) -> Iterator[Path]:
    """The toy method installed in ``site`` and found by a fresh registry (installed), removed
    afterwards (the test session's registry is installed again after each test)."""
    from haf_tui.methods.loader import load_methods

    install_toy(site)
    sys.path.insert(0, str(site))
    old_path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), old_path) if p)
    try:
        load_methods()
        yield site
    finally:
        sys.path.remove(str(site))
        for name in [m for m in sys.modules if m == "toy_method" or m.startswith("toy_method.")]:
            del sys.modules[name]
        if old_path is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old_path


def install_plugin(site: Path, name: str, source: str) -> Path:
    """A plug-in method called ``name`` whose module is ``source`` (its ``METHOD``, or
    whatever it does on import), installed under ``site`` with its entry point; the toy
    package is there too, importable (no entry point), for ``source`` to build on."""
    site.mkdir(parents=True, exist_ok=True)
    if not (site / "toy_method").exists():
        shutil.copytree(SOURCE, site / "toy_method", ignore=shutil.ignore_patterns("__pycache__"))
    package = site / f"{name}_plugin"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "method.py").write_text(source)
    info = site / f"{name}_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        f"[haf_tui.methods]\n{name} = {name}_plugin.method:METHOD\n"
    )
    return site


@contextmanager
def plugins_installed(site: Path, plugins: dict[str, str]) -> Iterator[Path]:
    """The plug-ins (name → module source) installed in ``site`` and found by the registry
    (in this process and, through ``PYTHONPATH``, in its children), removed afterwards."""
    from haf_tui.methods.loader import load_methods

    for name, source in plugins.items():
        install_plugin(site, name, source)
    sys.path.insert(0, str(site))
    old_path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), old_path) if p)
    packages = ("toy_method", *(f"{name}_plugin" for name in plugins))
    try:
        load_methods()
        yield site
    finally:
        sys.path.remove(str(site))
        for module in [m for m in sys.modules if m.split(".")[0] in packages]:
            del sys.modules[module]
        if old_path is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old_path
