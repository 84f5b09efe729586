"""Widgets of the workbench, each with its own DEFAULT_CSS."""
