"""The Textual workbench. :func:`create_app` is the factory the CLI and the tests share."""

from haf_tui.tui.app import HafApp, create_app

__all__ = ["HafApp", "create_app"]
