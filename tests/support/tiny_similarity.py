"""A tiny random sentence-transformers bi-encoder built in a folder, offline: a one-layer BERT
over a character vocabulary, random weights from a seed, mean pooling. A second similarity
model g for tests (``haf rescore``), with no download."""

from __future__ import annotations

import string
from pathlib import Path

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def tiny_bi_encoder(folder: Path, seed: int) -> Path:
    """Build and save the model under ``folder``; returns its folder (load it by path)."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    characters = list(string.ascii_lowercase + string.digits + string.punctuation)
    vocab = SPECIALS + characters + [f"##{c}" for c in characters]
    base = folder / f"bert-{seed}"
    base.mkdir(parents=True, exist_ok=True)
    (base / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast.from_pretrained(str(base), do_lower_case=True)
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=512,
    )
    BertModel(config).save_pretrained(base)
    tokenizer.save_pretrained(base)
    transformer = Transformer(str(base), max_seq_length=256)
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    out = folder / f"tiny-g-{seed}"
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(out))
    return out
