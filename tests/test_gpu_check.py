"""``make gpu-check CPU_DRY_RUN=1`` (issue 37 §3): the GPU check's own script, run here on a
tiny random model with the installed CPU build of llama-cpp-python (no CUDA build), prints
its one table and writes its figures: the steps a GPU machine runs are known to work before
one is lent."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.real_model
def test_the_dry_run_prints_its_table_and_writes_its_figures(tmp_path: Path) -> None:
    pytest.importorskip("gguf", reason="the gguf package writes the random model")
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    out = tmp_path / "gpu-check.json"
    command = ["make", "-s", "gpu-check", "CPU_DRY_RUN=1", f"GPU_PYTHON={sys.executable}"]
    done = subprocess.run(
        [*command, f"GPU_CHECK_OUT={out}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    table = [line for line in done.stdout.splitlines() if line.startswith("|")]
    assert table[0] == "| gpu-check | |" and "dry run" in table[2]
    figures = json.loads(out.read_text())
    assert figures["dry_run"] is True and figures["model"] == "random tiny, Q4_K_M"
    assert set(figures["decode_tok_s"]) == {"1", "8", "32"}
    assert all(rate > 0 for rate in figures["decode_tok_s"].values())
    assert figures["prompt_tok_s"] > 0 and figures["prompt_tokens"] > 100
    assert figures["agreement"]["tokens"] >= 1
    assert figures["agreement"]["max_abs_nats"] < 1e-3  # the same CPU path twice
    hours = list(figures["grid_hours"].values())
    assert len(hours) == 2 and 0 < hours[0] < hours[1]  # the paper-like grid is the longer
    assert figures["table"].splitlines() == table


def test_the_grid_projection_is_the_grid_s_tokens_over_the_measured_rates() -> None:
    from benchmarks.gpu.check import GRID_INSTANCES, MEASURED_PER_INSTANCE, projection

    (_, hours), _ = projection({1: 10.0, 32: 100.0}, 1000.0)
    prompt, generated = MEASURED_PER_INSTANCE
    assert hours == pytest.approx(GRID_INSTANCES * (prompt / 1000.0 + generated / 100.0) / 3600)


def test_the_random_model_has_llama_3_1_8b_s_shapes() -> None:
    from benchmarks.gpu.random_model import LLAMA_31_8B, _tensors

    shapes = dict((name, shape) for name, shape, _ in _tensors(LLAMA_31_8B))
    assert shapes["token_embd.weight"] == (128256, 4096)
    assert shapes["blk.31.attn_k.weight"] == (1024, 4096)  # 8 KV heads of 128
    assert shapes["blk.0.ffn_down.weight"] == (4096, 14336)
    parameters = sum(math.prod(s) for s in shapes.values())
    assert 8.0e9 < parameters < 8.1e9  # Llama-3.1-8B: 8.03 B


def test_the_tiled_model_has_the_types_and_sizes_llama_cpp_s_quantiser_gives_it(
    tmp_path: Path,
) -> None:
    """The GPU check writes its 8B model in the types the quantiser gave a narrow model of the
    same layer count: they must be the types, and so the bytes, the quantiser gives the model
    itself (8 layers: attn_v and ffn_down take Q6_K in some layers only)."""
    gguf = pytest.importorskip("gguf", reason="the gguf package writes the random model")
    pytest.importorskip("llama_cpp", reason="llama.cpp's quantiser makes the template")
    from benchmarks.gpu.random_model import (
        Shapes,
        narrow,
        quantize,
        write_random_gguf,
        write_tiled_gguf,
    )

    shapes = Shapes("mid", 512, 512, 8, 8, 2, 1024)
    direct = quantize(write_random_gguf(tmp_path / "f16.gguf", shapes), tmp_path / "q.gguf")
    template = write_random_gguf(tmp_path / "narrow-f16.gguf", narrow(shapes))
    template = quantize(template, tmp_path / "narrow.gguf")
    tiled = write_tiled_gguf(tmp_path / "tiled.gguf", shapes, template)

    def tensors(path: Path) -> dict[str, tuple[int, tuple[int, ...], int]]:
        reader = gguf.GGUFReader(str(path))
        return {
            t.name: (int(t.tensor_type), tuple(int(n) for n in t.shape), int(t.n_bytes))
            for t in reader.tensors
        }

    made, wanted = tensors(tiled), tensors(direct)
    assert made == wanted
    kinds = {kind for kind, _, _ in made.values()}
    assert {int(gguf.GGMLQuantizationType.Q4_K), int(gguf.GGMLQuantizationType.Q6_K)} <= kinds
    assert tiled.stat().st_size == pytest.approx(direct.stat().st_size, rel=1e-3)
    # the data are the template's blocks, from a whole block on
    block = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType.Q4_K][1]
    pool = b"".join(
        bytes(t.data)
        for t in gguf.GGUFReader(str(template)).tensors
        if t.tensor_type == gguf.GGMLQuantizationType.Q4_K
    )
    first = next(
        bytes(t.data)[:block]
        for t in gguf.GGUFReader(str(tiled)).tensors
        if t.name == "blk.3.attn_q.weight"
    )
    at = pool.find(first)
    assert at >= 0 and at % block == 0


def test_the_check_loads_llama_cpp_s_library_before_numpy(tmp_path: Path) -> None:
    """On the H200 machine's image a CUDA build loaded after numpy crashed its first model
    load; the check (here its dry run, in a fresh interpreter) imports llama_cpp, which loads
    the library, before anything imports numpy."""
    pytest.importorskip("gguf", reason="the gguf package writes the random model")
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    probe = (
        "import sys\n"
        "first = []\n"
        "class Order:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name in ('numpy', 'llama_cpp') and name not in first:\n"
        "            first.append(name)\n"
        "sys.meta_path.insert(0, Order())\n"
        "from benchmarks.gpu import check\n"
        f"check.main(['--cpu-dry-run', '--out', {str(tmp_path / 'out.json')!r}])\n"
        "print('first:', first)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "first: ['llama_cpp', 'numpy']"
