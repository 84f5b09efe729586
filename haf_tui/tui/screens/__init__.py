"""The screens of the workbench."""
