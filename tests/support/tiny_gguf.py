"""A tiny random Llama GGUF written with the ``gguf`` package (no download): a byte-level
BPE vocabulary (every byte, a few merges, ChatML's control tokens), a ChatML template, a few
float32 layers. llama.cpp and transformers' GGUF loader both open it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
MERGED = ("toxic", "non", "text", "the", "Text", "Answer", "hate", "you")


def _byte_symbols() -> list[str]:
    """GPT-2's printable stand-in of each byte, in byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    printable += list(range(ord("®"), ord("ÿ") + 1))
    symbols: dict[int, str] = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in symbols:
            symbols[b] = chr(256 + extra)
            extra += 1
    return [symbols[b] for b in range(256)]


def write_tiny_llama(
    path: Path, *, layers: int = 2, hidden: int = 64, heads: int = 4, kv_heads: int = 2,
    seed: int = 0,
) -> Path:  # fmt: skip
    """Write the model to ``path`` and return it."""
    import gguf

    rng = np.random.default_rng(seed)
    symbols = _byte_symbols()
    tokens, merges = list(symbols), []
    for word in MERGED:
        current = symbols[ord(word[0])]
        for char in word[1:]:
            merges.append(f"{current} {symbols[ord(char)]}")
            current += symbols[ord(char)]
            if current not in tokens:
                tokens.append(current)
    types = [gguf.TokenType.NORMAL] * len(tokens) + [gguf.TokenType.CONTROL] * 3
    tokens += ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    vocab, head_dim, ffn = len(tokens), hidden // heads, 2 * hidden
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(1024)
    writer.add_embedding_length(hidden)
    writer.add_block_count(layers)
    writer.add_feed_forward_length(ffn)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_freq_base(10000.0)
    writer.add_rope_dimension_count(head_dim)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_vocab_size(vocab)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(vocab - 3)
    writer.add_eos_token_id(vocab - 1)
    writer.add_add_bos_token(False)
    writer.add_chat_template(CHATML)

    def weight(name: str, *shape: int, scale: float = 0.2) -> None:
        writer.add_tensor(name, (rng.standard_normal(shape) * scale).astype(np.float32))

    def norm(name: str) -> None:
        writer.add_tensor(name, (1 + 0.1 * rng.standard_normal(hidden)).astype(np.float32))

    weight("token_embd.weight", vocab, hidden, scale=1.0)
    for i in range(layers):
        norm(f"blk.{i}.attn_norm.weight")
        weight(f"blk.{i}.attn_q.weight", hidden, hidden)
        weight(f"blk.{i}.attn_k.weight", kv_heads * head_dim, hidden)
        weight(f"blk.{i}.attn_v.weight", kv_heads * head_dim, hidden)
        weight(f"blk.{i}.attn_output.weight", hidden, hidden)
        norm(f"blk.{i}.ffn_norm.weight")
        weight(f"blk.{i}.ffn_gate.weight", ffn, hidden)
        weight(f"blk.{i}.ffn_up.weight", ffn, hidden)
        weight(f"blk.{i}.ffn_down.weight", hidden, ffn)
    norm("output_norm.weight")
    weight("output.weight", vocab, hidden)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
