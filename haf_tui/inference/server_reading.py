"""How a server backend reads an answer (issue 16; checked as of issue 33 §3): its tokens
checked (:mod:`.server_answers`, :mod:`.server_checks`; llama-server's shape, with ids and
bytes, :mod:`.server_content`), mapped to the local vocabulary's ids (the legacy shape names
tokens by text; llama-server's by id) and to text offsets by the same assembler as in
process."""

from __future__ import annotations

from typing import Any

from haf_tui.inference.base import GeneratedToken, Generation, TokenTextAssembler
from haf_tui.inference.chat import RenderedPrompt
from haf_tui.inference.llama import LlamaCppBackend
from haf_tui.inference.server_checks import Expected, check_against_request
from haf_tui.inference.server_content import Entry, ReadAnswer, check_entries, read_answer


class AnswerReading:
    """A server backend's reading of answers, over ``local`` (the GGUF's vocabulary, loaded
    here) and its ``chat_format``."""

    local: LlamaCppBackend
    chat_format: str
    _ids: dict[str, int] | None = None
    _pieces: set[str] | None = None

    def token_id(self, text: str) -> int:
        """The vocabulary id whose piece decodes to ``text`` (-1: none, e.g. a token the
        server printed as part of a character)."""
        if self._ids is None:
            ids: dict[str, int] = {}
            for token_id in range(self.local.n_vocab):
                piece = self.local.token_piece(token_id)
                try:
                    ids.setdefault(piece.decode("utf-8"), token_id)
                except UnicodeDecodeError:
                    continue
            self._ids = ids
        return self._ids.get(text, -1)

    def known(self, text: str) -> bool:
        """Whether ``text`` is a piece of the model's vocabulary, plain or special."""
        if self._pieces is None:
            pieces = set()
            for token_id in range(self.local.n_vocab):
                for special in (False, True):
                    try:
                        pieces.add(self.local.token_piece(token_id, special=special).decode())
                    except UnicodeDecodeError:
                        continue
            self._pieces = pieces
        return text in self._pieces

    def positions(self, answer: dict[str, Any], expected: Expected) -> ReadAnswer:
        """An answer's first choice and, per generated token, its text, raw logprob and top
        log-probabilities (and, from llama-server, its ids and bytes), each checked, and the
        answer checked against its request and the vocabulary (a :class:`BadAnswerError`
        saying what came back otherwise: :mod:`~haf_tui.inference.server_answers`,
        :mod:`~haf_tui.inference.server_content`, :mod:`~haf_tui.inference.server_checks`)."""
        read = read_answer(answer, expected.top_logprobs)
        if read.entries is not None:
            check_entries(read.entries, self.local.n_vocab, self._piece)
        by_ids = read.entries is not None
        check_against_request(
            answer, read.choice, read.positions, expected, self.known, by_ids=by_ids
        )
        return read

    def _piece(self, token_id: int, special: bool) -> bytes:
        return self.local.token_piece(token_id, special=special)

    def entry_token(self, assembler: TokenTextAssembler, entry: Entry) -> GeneratedToken:
        """One token of llama-server's shape, by its id and bytes (checked against the
        vocabulary: a character split over tokens comes as one entry, stored as one token)."""
        shown, byte_offset, char_offset = assembler.add(entry.data)
        return GeneratedToken(
            entry.token_id,
            entry.data,
            shown,
            byte_offset,
            char_offset,
            entry.logprob,
            tuple(t[0] for t in entry.top),
            tuple(t[2] for t in entry.top),
            tuple(t[1] for t in entry.top),
        )

    def token(
        self,
        assembler: TokenTextAssembler,
        text: str,
        logprob: float,
        top: dict[str, float],
        token_id: int | None = None,
    ) -> GeneratedToken:
        """One returned token with its offsets (``token_id`` given: a forced token, whose
        exact bytes come from the local vocabulary)."""
        if token_id is None:
            token_id, piece = self.token_id(text), text.encode("utf-8")
        else:
            piece = self.local.token_piece(token_id)
        shown, byte_offset, char_offset = assembler.add(piece)
        ranked = sorted(top.items(), key=lambda item: -item[1])
        return GeneratedToken(
            token_id,
            piece,
            shown,
            byte_offset,
            char_offset,
            logprob,
            tuple(self.token_id(str(t)) for t, _ in ranked),
            tuple(v for _, v in ranked),
            tuple(str(t) for t, _ in ranked),
        )

    def generation(
        self,
        prompt: RenderedPrompt,
        answer: dict[str, Any],
        seconds: float,
        url: str,
        expected: Expected,
    ) -> Generation:
        """A server's answer as a :class:`Generation` (tokens, raw logprobs, offsets)."""
        read = self.positions(answer, expected)
        choice = read.choice
        assembler = TokenTextAssembler()
        if read.entries is not None:
            entries = read.entries
            if entries and self.local.ends_generation(entries[-1].token_id):
                entries = entries[:-1]  # (llama-server lists the end token; haf never stores it)
            tokens = [self.entry_token(assembler, entry) for entry in entries]
        else:
            tokens = [self.token(assembler, t, value, top) for t, value, top in read.positions]
        usage = answer.get("usage")
        prompt_tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        return Generation(
            prompt_text=prompt.text,
            prompt_token_count=prompt_tokens if isinstance(prompt_tokens, int) else 0,
            text=assembler.finish(),
            tokens=tokens,
            finish_reason=str(choice.get("finish_reason") or "stop"),
            seconds=seconds,
            chat_format=self.chat_format,
            extra={"server": url, "folded_system": prompt.folded_system},
        )
