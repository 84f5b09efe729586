"""``python -m benchmarks``: every benchmark (see :mod:`benchmarks.bench`)."""

from benchmarks.bench import main

main()
