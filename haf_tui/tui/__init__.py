"""The Textual workbench. :func:`create_app` is the factory the CLI and the tests share.

The workbench is where a program starts (``haf`` alone), and some of its modules read the
methods as they load (the instance list's default columns): the methods are loaded here,
first, unless the program has loaded them already (``haf``'s main, the test session)."""

from haf_tui.methods.loader import ensure_methods

ensure_methods()

from haf_tui.tui.app import HafApp, create_app  # noqa: E402  (after the methods are loaded)

__all__ = ["HafApp", "create_app"]
