"""A Llama-architecture GGUF of random weights with given shapes (issue 37 §3): the GPU
check's model, made on the machine (no weights are downloaded; decode speed does not depend
on the values). The tokenizer is a byte-level BPE of its own (the 256 bytes, ChatML's two
markers, padding up to the vocabulary's size), so nothing but this file travels.

Tensors are F16 (norms F32), filled from one pool of seeded random values at a random offset
each (generating 8 billion fresh values would take minutes). The check quantises a narrow
model of the same layer count and head ratio with llama.cpp's own quantiser (:func:`quantize`)
and writes the full-size model in its types (:func:`write_tiled_gguf`): every tensor has the
type the quantiser gave that tensor, its data the quantiser's blocks of that type, repeated.
Quantising 8 billion F16 values would take minutes of the GPU machine's time (the lease is
short) and would give the same bytes per tensor."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
POOL = 1 << 24
"""Random values generated once; every tensor is a window of them."""


@dataclass(frozen=True)
class Shapes:
    """A Llama model's shapes."""

    name: str
    n_vocab: int
    n_embd: int
    n_layer: int
    n_head: int
    n_head_kv: int
    n_ff: int
    rope_base: float = 500000.0


LLAMA_31_8B = Shapes("Llama-3.1-8B shapes", 128256, 4096, 32, 32, 8, 14336)
TINY = Shapes("tiny", 512, 256, 2, 4, 2, 512, 10000.0)


def _byte_symbols() -> list[str]:
    """GPT-2's byte-to-character map (the byte-level BPE's 256 base tokens)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    printable += list(range(ord("®"), ord("ÿ") + 1))
    symbols: dict[int, str] = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in symbols:
            symbols[b] = chr(256 + extra)
            extra += 1
    return [symbols[b] for b in range(256)]


def vocabulary(n_vocab: int) -> tuple[list[str], list[int], list[str]]:
    """Tokens, their types (1 normal, 3 control) and merges of the byte-level tokenizer."""
    tokens = [*_byte_symbols(), "Ġt", "<|im_start|>", "<|im_end|>"]
    types = [1] * 257 + [3, 3]
    tokens += [f"<|pad_{i}|>" for i in range(n_vocab - len(tokens))]
    types += [3] * (n_vocab - len(types))
    return tokens, types, ["Ġ t"]


def _tensors(shapes: Shapes) -> Iterator[tuple[str, tuple[int, ...], bool]]:
    """(name, numpy shape, is a norm) of every tensor."""
    e, kv = shapes.n_embd, shapes.n_embd // shapes.n_head * shapes.n_head_kv
    yield "token_embd.weight", (shapes.n_vocab, e), False
    for i in range(shapes.n_layer):
        yield f"blk.{i}.attn_norm.weight", (e,), True
        yield f"blk.{i}.attn_q.weight", (e, e), False
        yield f"blk.{i}.attn_k.weight", (kv, e), False
        yield f"blk.{i}.attn_v.weight", (kv, e), False
        yield f"blk.{i}.attn_output.weight", (e, e), False
        yield f"blk.{i}.ffn_norm.weight", (e,), True
        yield f"blk.{i}.ffn_gate.weight", (shapes.n_ff, e), False
        yield f"blk.{i}.ffn_up.weight", (shapes.n_ff, e), False
        yield f"blk.{i}.ffn_down.weight", (e, shapes.n_ff), False
    yield "output_norm.weight", (e,), True
    yield "output.weight", (shapes.n_vocab, e), False


def narrow(shapes: Shapes) -> Shapes:
    """A small model whose tensors the quantiser types as it types ``shapes``': the same
    layer count and query heads per key-value head, every row's length a multiple of 256."""
    per_kv = shapes.n_head // shapes.n_head_kv
    return Shapes(f"{shapes.name}, narrow", 512, 256, shapes.n_layer, per_kv, 1, 512)


def _writer(path: Path, shapes: Shapes, file_type: Any) -> Any:
    """A GGUF writer with ``shapes``' metadata and the byte-level tokenizer."""
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(f"random {shapes.name}")
    writer.add_context_length(8192)
    writer.add_embedding_length(shapes.n_embd)
    writer.add_block_count(shapes.n_layer)
    writer.add_feed_forward_length(shapes.n_ff)
    writer.add_head_count(shapes.n_head)
    writer.add_head_count_kv(shapes.n_head_kv)
    writer.add_rope_freq_base(shapes.rope_base)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(shapes.n_embd // shapes.n_head)
    writer.add_vocab_size(shapes.n_vocab)
    writer.add_file_type(file_type)
    tokens, types, merges = vocabulary(shapes.n_vocab)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(257)
    writer.add_eos_token_id(258)
    writer.add_add_bos_token(False)
    writer.add_chat_template(CHATML)
    return writer


def write_random_gguf(path: Path, shapes: Shapes, seed: int = 0) -> Path:
    """Write the model to ``path`` (F16 weights, F32 norms), streaming tensor by tensor."""
    import gguf

    rng = np.random.default_rng(seed)
    pool = (rng.standard_normal(POOL, dtype=np.float32) * 0.02).astype(np.float16)
    writer = _writer(path, shapes, gguf.LlamaFileType.MOSTLY_F16)
    plan = list(_tensors(shapes))
    for name, shape, norm in plan:
        dtype: Any = np.float32 if norm else np.float16
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        writer.add_tensor_info(name, shape, np.dtype(dtype), nbytes)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for _, shape, norm in plan:
        writer.write_tensor_data(_filled(shape, norm, pool, rng))
    writer.close()
    return path


def write_tiled_gguf(path: Path, shapes: Shapes, template: Path, seed: int = 0) -> Path:
    """Write ``shapes``' model to ``path`` in ``template``'s types: ``template`` is a model
    the quantiser made of :func:`narrow` (the same tensor names); each tensor of ``path`` has
    the type of its namesake there, its data that type's blocks from ``template`` from a random
    whole block on, repeated (norms and other F32 tensors are ones)."""
    import gguf

    reader = gguf.GGUFReader(str(template))
    kinds = {t.name: gguf.GGMLQuantizationType(int(t.tensor_type)) for t in reader.tensors}
    pools: dict[Any, Any] = {}
    for t in reader.tensors:
        kind = kinds[t.name]
        pools.setdefault(kind, []).append(np.asarray(t.data).view(np.uint8).reshape(-1))
    blocks = {kind: np.concatenate(parts) for kind, parts in pools.items()}
    plan = list(_tensors(shapes))
    missing = sorted(name for name, _, _ in plan if name not in kinds)
    if missing:
        raise ValueError(f"{template} has no tensor {missing[0]} ({len(missing)} missing)")
    rng = np.random.default_rng(seed)
    floats = {gguf.GGMLQuantizationType.F32: np.float32, gguf.GGMLQuantizationType.F16: np.float16}
    writer = _writer(path, shapes, gguf.LlamaFileType.MOSTLY_Q4_K_M)
    for name, shape, _ in plan:
        kind = kinds[name]
        if kind in floats:
            dtype = np.dtype(floats[kind])
            writer.add_tensor_info(name, shape, dtype, int(np.prod(shape)) * dtype.itemsize)
            continue
        block, size = gguf.GGML_QUANT_SIZES[kind]
        if shape[-1] % block:
            raise ValueError(f"{name}: {shape[-1]} values a row is not whole {kind.name} blocks")
        byte_shape = (*shape[:-1], shape[-1] // block * size)
        writer.add_tensor_info(name, byte_shape, np.dtype(np.uint8), int(np.prod(byte_shape)), kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for name, shape, _ in plan:
        kind = kinds[name]
        if kind in floats:
            writer.write_tensor_data(np.ones(shape, dtype=floats[kind]))
            continue
        block, size = gguf.GGML_QUANT_SIZES[kind]
        pool = blocks[kind]
        start = int(rng.integers(0, len(pool) // size)) * size
        byte_shape = (*shape[:-1], shape[-1] // block * size)
        data = np.resize(np.roll(pool, -start), int(np.prod(byte_shape))).reshape(byte_shape)
        writer.write_tensor_data(data)
    writer.close()
    return path


def _filled(shape: tuple[int, ...], norm: bool, pool: Any, rng: Any) -> Any:
    if norm:
        return np.ones(shape, dtype=np.float32)
    size = int(np.prod(shape))
    start = int(rng.integers(0, POOL))
    return np.resize(np.roll(pool, -start), size).reshape(shape)


def quantize(source: Path, target: Path, kind: str = "Q4_K_M", threads: int = 0) -> Path:
    """llama.cpp's own quantiser (``llama_model_quantize``, the library llama-cpp-python
    loaded: the CUDA build on a GPU machine, the installed one in a dry run)."""
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{kind}")
    params.nthread = threads
    status = llama_cpp.llama_model_quantize(str(source).encode(), str(target).encode(), params)
    if status != 0:
        raise RuntimeError(f"llama_model_quantize returned {status}")
    return target
