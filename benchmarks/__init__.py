"""``make bench``: speed figures of haf-tui, outside the package (the wheel ships none of it).

- :mod:`benchmarks.bench` — every benchmark, written to ``bench-results/bench.json`` and ``.md``;
- :mod:`benchmarks.throughput` — single against batched decoding, prefix reuse, occlusion;
- :mod:`benchmarks.pipeline_bench` — whole runs: the pipeline one at a time against batched;
- :mod:`benchmarks.tui_latency` — keypress latency of every screen on a large synthetic store;
- :mod:`benchmarks.benchdata` — that synthetic store (also what the TUI tests browse).
"""
