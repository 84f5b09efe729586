"""A tiny random sentence-transformers bi-encoder built in a folder, offline: a one-layer BERT
over a character vocabulary, random weights from a seed, mean pooling. A second similarity
model g for tests (``haf rescore``), with no download."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def tiny_bi_encoder(folder: Path, seed: int) -> Path:
    """Build and save the model under ``folder``; returns its folder (load it by path)."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import BertModel

    base = folder / f"bert-{seed}"
    tokenizer, config = _character_bert(base, seed)
    BertModel(config).save_pretrained(base)
    tokenizer.save_pretrained(base)
    transformer = Transformer(str(base), max_seq_length=256)
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    out = folder / f"tiny-g-{seed}"
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(out))
    return out


def tiny_cross_encoder(folder: Path, seed: int, *, num_labels: int = 1) -> Path:
    """A tiny random cross-encoder saved whole (its classification head in the checkpoint):
    a one-layer BERT for sequence classification over the same character vocabulary."""
    from transformers import BertForSequenceClassification

    out = folder / f"tiny-cross-{seed}-{num_labels}"
    tokenizer, config = _character_bert(out, seed)
    config.num_labels = num_labels
    BertForSequenceClassification(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def nan_bi_encoder(folder: Path) -> Path:
    """The tiny bi-encoder of seed 3 with its word embeddings NaN: it loads and scores every
    pair NaN (what a broken or half-converted model folder does)."""
    from sentence_transformers import SentenceTransformer

    path = tiny_bi_encoder(folder, 3)
    model = SentenceTransformer(str(path), device="cpu")
    encoder: Any = model[0].auto_model
    embeddings = encoder.get_input_embeddings()
    embeddings.weight.data.fill_(float("nan"))
    out = folder / "tiny-g-nan"
    model.save(str(out))
    return out


def _character_bert(folder: Path, seed: int) -> tuple[Any, Any]:
    """The tokenizer (its character vocabulary written to ``folder``) and the config of a
    one-layer BERT, torch seeded with ``seed`` for the weights made next."""
    import torch
    from transformers import BertConfig, BertTokenizerFast

    characters = list(string.ascii_lowercase + string.digits + string.punctuation)
    vocab = SPECIALS + characters + [f"##{c}" for c in characters]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast.from_pretrained(str(folder), do_lower_case=True)
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=512,
    )
    return tokenizer, config
