"""Read a GGUF file's metadata (architecture, context length, quantization, chat template)
without loading its weights, and tell a missing, truncated or non-GGUF file apart."""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from haf_tui.inference.base import InferenceError

GGUF_MAGIC = b"GGUF"
_SCALAR_FORMATS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
_STRING, _ARRAY = 8, 9
_LENGTH = struct.Struct("<Q")
"""A string's length, before its bytes."""
# general.file_type -> quantization name (llama.cpp's llama_ftype).
FILE_TYPES = {
    0: "F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    7: "Q8_0",
    8: "Q5_0",
    9: "Q5_1",
    10: "Q2_K",
    11: "Q3_K_S",
    12: "Q3_K_M",
    13: "Q3_K_L",
    14: "Q4_K_S",
    15: "Q4_K_M",
    16: "Q5_K_S",
    17: "Q5_K_M",
    18: "Q6_K",
    19: "IQ2_XXS",
    20: "IQ2_XS",
    21: "Q2_K_S",
    22: "IQ3_XS",
    23: "IQ3_XXS",
    24: "IQ1_S",
    25: "IQ4_NL",
    26: "IQ3_S",
    27: "IQ3_M",
    28: "IQ2_S",
    29: "IQ2_M",
    30: "IQ4_XS",
    31: "IQ1_M",
    32: "BF16",
    36: "TQ1_0",
    37: "TQ2_0",
    38: "MXFP4",
}
# ggml tensor type -> (elements per block, bytes per block), to check the file is complete.
_TENSOR_BLOCKS = {
    0: (1, 4),
    1: (1, 2),
    2: (32, 18),
    3: (32, 20),
    6: (32, 22),
    7: (32, 24),
    8: (32, 34),
    9: (32, 36),
    10: (256, 84),
    11: (256, 110),
    12: (256, 144),
    13: (256, 176),
    14: (256, 210),
    15: (256, 292),
    16: (256, 66),
    17: (256, 74),
    18: (256, 98),
    19: (256, 110),
    20: (32, 18),
    21: (256, 136),
    22: (256, 50),
    23: (256, 110),
    24: (1, 1),
    25: (1, 2),
    26: (1, 4),
    27: (1, 8),
    28: (1, 8),
    29: (256, 56),
    30: (1, 2),
    34: (256, 54),
    35: (256, 66),
    39: (32, 17),
}


@dataclass(frozen=True)
class GGUFInfo:
    """What the wizard and a run record need to know about a GGUF file."""

    path: Path
    size_bytes: int
    version: int
    tensor_count: int
    architecture: str
    name: str
    quantization: str
    context_length: int | None
    block_count: int | None
    chat_template: str | None
    metadata: dict[str, Any] = field(repr=False, default_factory=dict)

    @property
    def has_chat_template(self) -> bool:
        """Whether the file carries its own chat template."""
        return bool(self.chat_template)


class _Reader:
    def __init__(self, buffer: mmap.mmap | bytes, path: Path):
        self.buffer, self.offset, self.path = buffer, 0, path

    def take(self, fmt: str) -> Any:
        size = struct.calcsize("<" + fmt)
        if self.offset + size > len(self.buffer):
            raise InferenceError(f"truncated GGUF file: {self.path} ends inside its header")
        (value,) = struct.unpack_from("<" + fmt, self.buffer, self.offset)
        self.offset += size
        return value

    def string(self) -> str:
        length = self.take("Q")
        if self.offset + length > len(self.buffer):
            raise InferenceError(f"truncated GGUF file: {self.path} ends inside its header")
        raw = bytes(self.buffer[self.offset : self.offset + length])
        self.offset += length
        return raw.decode("utf-8", errors="replace")

    def skip_strings(self, count: int) -> None:
        """Step over ``count`` strings unread (a vocabulary's 100,000 tokens and merges in
        milliseconds: decoding each took the wizard's model list 0.2 s per file). A count more
        strings than the rest of the file holds (each at least its 8-byte length) is truncated
        at once: a forged count over zeros stepped through the whole file 8 bytes a time."""
        buffer, offset, end = self.buffer, self.offset, len(self.buffer)
        if count > (end - offset) // 8:
            raise InferenceError(f"truncated GGUF file: {self.path} ends inside its header")
        length_at = _LENGTH.unpack_from
        for _ in range(count):
            if offset + 8 > end:
                raise InferenceError(f"truncated GGUF file: {self.path} ends inside its header")
            offset += 8 + length_at(buffer, offset)[0]
        self.offset = offset  # (past the end: the next read says the file is truncated)

    def value(self, value_type: int, keep: bool) -> Any:
        if value_type == _STRING:
            return self.string()
        if value_type == _ARRAY:
            item_type, count = self.take("I"), self.take("Q")
            if item_type in _SCALAR_FORMATS and not keep:
                self.offset += count * struct.calcsize(_SCALAR_FORMATS[item_type])
                return f"<array of {count}>"
            if item_type == _STRING and not keep:
                self.skip_strings(count)
                return f"<array of {count}>"
            items = [self.value(item_type, keep) for _ in range(count)]
            return items if keep else f"<array of {count}>"
        if value_type not in _SCALAR_FORMATS:
            raise InferenceError(
                f"corrupt GGUF file: {self.path} has unknown value type {value_type}"
            )
        return self.take(_SCALAR_FORMATS[value_type])


def read_gguf_info(path: str | Path, *, check_tensors: bool = True) -> GGUFInfo:
    """Read the metadata of a GGUF file; raises :class:`InferenceError` with one clear line
    for a missing, empty, non-GGUF or truncated file."""
    model_path = Path(path).expanduser()
    if model_path.is_dir():
        raise InferenceError(f"{model_path} is a folder, not a GGUF file: pass the .gguf inside")
    if not model_path.is_file():
        raise InferenceError(f"model file not found: {model_path}")
    size = model_path.stat().st_size
    if size < 24:
        raise InferenceError(f"not a GGUF file: {model_path} is only {size} bytes")
    with (
        model_path.open("rb") as handle,
        mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buf,
    ):
        if buf[:4] != GGUF_MAGIC:
            raise InferenceError(f"not a GGUF file: {model_path} (starts with {bytes(buf[:4])!r})")
        reader = _Reader(buf, model_path)
        reader.offset = 4
        version = reader.take("I")
        if version not in (2, 3):
            raise InferenceError(f"unsupported GGUF version {version} in {model_path}")
        tensor_count, kv_count = reader.take("Q"), reader.take("Q")
        metadata: dict[str, Any] = {}
        for _ in range(kv_count):
            key = reader.string()
            metadata[key] = reader.value(
                reader.take("I"), keep=not key.startswith("tokenizer.ggml.")
            )
        if check_tensors:
            _check_tensor_data(reader, tensor_count, metadata, size)
    arch = str(metadata.get("general.architecture", "unknown"))
    file_type = metadata.get("general.file_type")
    return GGUFInfo(
        path=model_path,
        size_bytes=size,
        version=version,
        tensor_count=tensor_count,
        architecture=arch,
        name=str(metadata.get("general.name", model_path.stem)),
        quantization=FILE_TYPES.get(file_type, str(file_type))
        if file_type is not None
        else "unknown",
        context_length=metadata.get(f"{arch}.context_length"),
        block_count=metadata.get(f"{arch}.block_count"),
        chat_template=metadata.get("tokenizer.chat_template"),
        metadata=metadata,
    )


def _check_tensor_data(
    reader: _Reader, tensor_count: int, metadata: dict[str, Any], size: int
) -> None:
    data_end = 0
    for _ in range(tensor_count):
        reader.string()
        n_dims = reader.take("I")
        elements = 1
        for _ in range(n_dims):
            elements *= reader.take("Q")
        tensor_type, offset = reader.take("I"), reader.take("Q")
        block = _TENSOR_BLOCKS.get(tensor_type)
        if block is not None:
            data_end = max(data_end, offset + elements // block[0] * block[1])
    alignment = int(metadata.get("general.alignment", 32))
    data_start = -(-reader.offset // alignment) * alignment
    if data_start + data_end > size:
        missing = data_start + data_end - size
        raise InferenceError(
            f"truncated GGUF file: {reader.path} is {missing} bytes shorter than its tensors need"
        )
