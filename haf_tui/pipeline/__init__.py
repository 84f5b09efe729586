"""The staged pipeline: stages, the runner, progress events, and run start/resume."""
