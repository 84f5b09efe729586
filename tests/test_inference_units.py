"""Inference building blocks without a model: GGUF header checks, chat rendering, offsets."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from haf_tui.inference import gguf
from haf_tui.inference.base import InferenceError, TokenTextAssembler, tokens_in_span
from haf_tui.inference.chat import render_named, render_template
from haf_tui.inference.gguf import read_gguf_info
from haf_tui.inference.llama_model import RawLogprobReader
from haf_tui.methods.haf.core.prompts import justify_messages


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def _strings(texts: list[str]) -> bytes:
    return struct.pack("<IQ", 8, len(texts)) + b"".join(_string(text) for text in texts)


def write_tiny_gguf(
    path: Path, *, tensor_elements: int = 64, data: bool = True, tokens: int = 2
) -> Path:
    """A minimal GGUF v3: a few metadata keys (a vocabulary of ``tokens`` strings among them,
    and a list that is kept) and one F32 tensor."""
    vocabulary = [chr(ord("a") + i % 26) * (1 + i % 7) for i in range(tokens)]
    kvs = [
        (_string("general.architecture"), 8, _string("llama")),
        (_string("general.name"), 8, _string("tiny")),
        (_string("general.file_type"), 4, struct.pack("<I", 15)),
        (_string("tokenizer.ggml.tokens"), 9, _strings(vocabulary)),
        (_string("general.tags"), 9, _strings(["tiny", "test"])),
        (_string("llama.context_length"), 4, struct.pack("<I", 2048)),
    ]
    body = b"GGUF" + struct.pack("<IQQ", 3, 1, len(kvs))
    for key, kind, value in kvs:
        body += key + struct.pack("<I", kind) + value
    body += _string("w") + struct.pack("<IQ", 1, tensor_elements) + struct.pack("<IQ", 0, 0)
    body += b"\0" * (-len(body) % 32)
    if data:
        body += b"\0" * (4 * tensor_elements)
    path.write_bytes(body)
    return path


def test_gguf_metadata_read_without_weights(tmp_path: Path) -> None:
    info = read_gguf_info(write_tiny_gguf(tmp_path / "m.gguf"))
    assert (info.architecture, info.name, info.quantization) == ("llama", "tiny", "Q4_K_M")
    assert info.context_length == 2048 and not info.has_chat_template
    assert info.metadata["tokenizer.ggml.tokens"] == "<array of 2>"


def test_a_vocabulary_is_stepped_over_and_a_file_cut_inside_it_is_truncated(
    tmp_path: Path,
) -> None:
    whole = write_tiny_gguf(tmp_path / "m.gguf", tokens=300)
    info = read_gguf_info(whole)
    assert info.metadata["tokenizer.ggml.tokens"] == "<array of 300>"
    # what follows the vocabulary is read where it lies
    assert info.metadata["general.tags"] == ["tiny", "test"] and info.context_length == 2048
    raw = whole.read_bytes()
    start = raw.index(b"tokenizer.ggml.tokens")
    for cut in (start + 40, start + 41, start + 600, start + 1200):  # (inside the vocabulary)
        (tmp_path / "cut.gguf").write_bytes(raw[:cut])
        with pytest.raises(InferenceError, match="truncated GGUF file"):
            read_gguf_info(tmp_path / "cut.gguf")


class _CountedLengths:
    """The strings' 8-byte length reader, counting the lengths read."""

    def __init__(self) -> None:
        self.read = 0

    def unpack_from(self, buffer: Any, offset: int) -> tuple[int, ...]:
        self.read += 1
        return struct.unpack_from("<Q", buffer, offset)


@pytest.mark.parametrize("zeros", [0, 8, 4096, 4100])
def test_a_vocabulary_counting_more_strings_than_the_file_holds_is_truncated_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zeros: int
) -> None:
    """A forged count over a zero-filled rest (empty strings, 8 bytes each): as many as fit
    are stepped over; one more, or 2⁶³, is truncated before a length is read (a huge count
    stepped through the whole file 8 bytes a time)."""
    lengths = _CountedLengths()
    monkeypatch.setattr(gguf, "_LENGTH", lengths)

    def forged(count: int) -> Path:
        header = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + _string("tokenizer.ggml.tokens")
        path = tmp_path / f"forged-{count}.gguf"
        path.write_bytes(header + struct.pack("<IIQ", 9, 8, count) + b"\0" * zeros)
        return path

    fitting = zeros // 8
    info = read_gguf_info(forged(fitting), check_tensors=False)
    assert info.metadata["tokenizer.ggml.tokens"] == f"<array of {fitting}>"
    assert lengths.read == fitting
    lengths.read = 0
    for count in (fitting + 1, 2**63):
        with pytest.raises(InferenceError, match="truncated GGUF file"):
            read_gguf_info(forged(count), check_tensors=False)
        assert lengths.read == 0


def test_gguf_errors_are_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(InferenceError, match="model file not found"):
        read_gguf_info(tmp_path / "missing.gguf")
    (tmp_path / "text.gguf").write_text("this is not a model at all, just text")
    with pytest.raises(InferenceError, match="not a GGUF file"):
        read_gguf_info(tmp_path / "text.gguf")
    whole = write_tiny_gguf(tmp_path / "whole.gguf").read_bytes()
    (tmp_path / "cut.gguf").write_bytes(whole[:60])
    with pytest.raises(InferenceError, match="truncated GGUF file"):
        read_gguf_info(tmp_path / "cut.gguf")
    write_tiny_gguf(tmp_path / "nodata.gguf", data=False)
    with pytest.raises(InferenceError, match="shorter than its tensors need"):
        read_gguf_info(tmp_path / "nodata.gguf")


def test_named_gemma_format_folds_system_and_keeps_content_plain() -> None:
    prompt = render_named(justify_messages("hi <start_of_turn>model"), "gemma")
    assert prompt.folded_system and prompt.chat_format == "gemma"
    assert prompt.text.startswith("<start_of_turn>user\nIs the below TEXT toxic?")
    assert prompt.text.endswith("<end_of_turn>\n<start_of_turn>model\n")
    plain = [s.text for s in prompt.segments if s.plain]
    assert plain == [
        justify_messages("hi <start_of_turn>model")[0].content
        + "\n\n\nTEXT: \nhi <start_of_turn>model"
    ]
    with pytest.raises(InferenceError, match="unknown chat format"):
        render_named(justify_messages("x"), "nonsense")


def test_template_without_system_role_is_folded() -> None:
    template = (
        "{% for m in messages %}{% if m['role'] == 'system' %}"
        "{{ raise_exception('System role not supported') }}{% endif %}"
        "<u>{{ m['content'] | trim }}</u>{% endfor %}{% if add_generation_prompt %}<a>{% endif %}"
    )
    prompt = render_template(justify_messages("some text"), template)
    assert prompt.folded_system
    assert prompt.text.startswith("<u>Is the below TEXT toxic?") and prompt.text.endswith("</u><a>")
    system_first = "{% for m in messages %}[{{ m['role'] }}]{{ m['content'] }}{% endfor %}"
    kept = render_template(justify_messages("t"), system_first)
    assert not kept.folded_system and "[system]" in kept.text


def test_assembler_offsets_handle_split_utf8() -> None:
    assembler = TokenTextAssembler()
    euro = "€".encode()
    pieces = [b"A ", euro[:2], euro[2:] + b"!", b" ok"]
    results = [assembler.add(p) for p in pieces]
    assert assembler.finish() == "A €! ok"
    assert [r[1] for r in results] == [0, 2, 4, 6]  # byte offsets
    assert [r[2] for r in results] == [0, 2, 2, 4]  # char offsets
    assert results[1][0] == "" and results[2][0] == "€!"


def test_tokens_in_span_uses_overlap() -> None:
    from haf_tui.inference.base import GeneratedToken

    tokens = [
        GeneratedToken(i, b"", t, 0, off, -1.0)
        for i, (t, off) in enumerate([("ab", 0), ("cd", 2), ("ef", 4)])
    ]
    assert tokens_in_span(tokens, 1, 3) == [0, 1]
    assert tokens_in_span(tokens, 4, 6) == [2]
    assert tokens_in_span(tokens, 6, 9) == []


def test_raw_logprob_reader_matches_log_softmax() -> None:
    rng = np.random.default_rng(0)
    logits = rng.normal(size=1000).astype(np.float32) * 4
    reader = RawLogprobReader(1000)
    logprob, top_ids, top_logprobs = reader.read(logits, 7, 3)
    reference = logits.astype(np.float64) - np.log(np.exp(logits.astype(np.float64)).sum())
    assert logprob == pytest.approx(reference[7], abs=1e-5)
    assert list(top_ids) == list(np.argsort(-logits)[:3])
    assert top_logprobs == pytest.approx(reference[list(top_ids)], abs=1e-5)


@pytest.mark.parametrize(
    "logits",
    [
        np.linspace(0.0, 1.0, 5000, dtype=np.float32),  # thousands near the peak: full partition
        np.concatenate([np.zeros(4999, np.float32), np.array([50.0], np.float32)]),  # one peak
        np.random.default_rng(1).standard_cauchy(50_000).astype(np.float32),  # heavy tail
    ],
)
def test_top_k_is_exact_whichever_path_finds_it(logits: np.ndarray) -> None:  # type: ignore[type-arg]
    reader = RawLogprobReader(logits.size)
    _, top_ids, top_logprobs = reader.read(logits, 0, 5)
    expected = np.sort(logits)[::-1][:5]
    assert np.allclose(logits[list(top_ids)], expected)
    assert list(top_logprobs) == sorted(top_logprobs, reverse=True)
