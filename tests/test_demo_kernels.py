"""benchmarks/demo_kernels' comparison of one arm's JUSTIFY answers with the in-process ones
(docs/demo.md's kernel table rests on it): which texts went on, which answers are the same byte
for byte, where the others part and what the reference's margin was there, and the largest
log-probability difference over the tokens both answers share. Hand-made answers, no model."""

from __future__ import annotations

from benchmarks.demo_kernels import (
    Answers,
    Parting,
    Token,
    by_text_table,
    compare_answers,
    kernel_order,
    table,
)


def _token(token_id: int, logprob: float, runner_up: int, runner_logprob: float) -> Token:
    return Token(token_id, logprob, {token_id: logprob, runner_up: runner_logprob})


REFERENCE = Answers(
    texts={"s01": "AB", "s02": "CD", "s03": "EF"},
    went_on={"s01": True, "s02": False, "s03": True},
    tokens={
        "s01": [_token(1, -0.1, 9, -2.5), _token(2, -0.2, 9, -1.9)],
        "s02": [_token(3, -0.6, 4, -0.7), _token(5, -0.3, 9, -1.4)],
        "s03": [_token(6, -0.1, 9, -3.0), _token(7, -0.1, 9, -3.0)],
    },
)


def test_the_same_answers_give_no_difference_and_no_parting() -> None:
    row = compare_answers("same", REFERENCE, REFERENCE)
    assert (row.went_on, row.identical, row.of, row.parted) == (["s01", "s03"], 3, 3, [])
    assert row.largest_logprob_difference == 0.0
    assert row.compared_logprobs == 6 * 3  # each token's own and its 2 alternatives


def test_an_answer_that_parts_at_a_near_tie_is_named_with_the_reference_s_gap() -> None:
    other = Answers(
        texts={"s01": "AB", "s02": "CX", "s03": "EF"},
        went_on={"s01": True, "s02": True, "s03": False},
        tokens={
            "s01": [_token(1, -0.1, 9, -2.5), _token(2, -0.2004, 9, -1.9)],
            # s02: token 4 wins here (its logprob -0.64), the reference's 3 is runner-up
            "s02": [Token(4, -0.64, {4: -0.64, 3: -0.66}), _token(8, -0.1, 9, -5.0)],
            "s03": REFERENCE.tokens["s03"],
        },
    )
    row = compare_answers("other", other, REFERENCE)
    assert row.went_on == ["s01", "s02"] and (row.identical, row.of) == (2, 3)
    assert len(row.parted) == 1
    parted = row.parted[0]
    assert (parted.instance_id, parted.position) == ("s02", 0)
    assert parted.reference_gap is not None and abs(parted.reference_gap - 0.1) < 1e-9
    # the parting token's alternatives count (-0.64 vs -0.7, -0.66 vs -0.6); later ones do not
    # (s02's second token follows other text: its -5.0 is never compared)
    assert abs(row.largest_logprob_difference - 0.06) < 1e-9
    assert row.compared_logprobs == 6 + 2 + 6  # s02: its first token's 2 shared alternatives
    assert "s02 at token 0 (gap 0.1)" in table([row])


def test_an_answer_longer_than_the_reference_with_the_same_tokens_parts_at_its_end() -> None:
    longer = Answers(
        texts={**REFERENCE.texts, "s03": "EFG"},
        went_on=REFERENCE.went_on,
        tokens={**REFERENCE.tokens, "s03": [*REFERENCE.tokens["s03"], _token(8, -0.1, 9, -3.0)]},
    )
    row = compare_answers("longer", longer, REFERENCE)
    assert row.identical == 2 and row.parted == [Parting("s03", 2, None)]


def test_texts_are_ordered_by_how_many_arms_took_them_past_justify() -> None:
    went_on = {
        "in-process": {"s01": True, "s02": False, "s03": True, "s04": True},
        "avx2": {"s01": False, "s02": True, "s03": True, "s04": True},
        "scalar": {"s01": True, "s03": True},  # (s02 and s04 not run there: stopped)
    }
    order = ["s01", "s02", "s03", "s04", "s05"]
    # most arms first; a tie keeps the given order (s01 before s04), none at all last
    assert kernel_order(went_on, order) == [
        ("s03", 3),
        ("s01", 2),
        ("s04", 2),
        ("s02", 1),
        ("s05", 0),
    ]
    lines = by_text_table(went_on, order).splitlines()
    assert lines[0] == "| text | in-process | avx2 | scalar | arms |"
    assert lines[2] == "| s03 | on | on | on | 3 of 3 |"
    assert lines[-1] == "| s05 | - | - | - | 0 of 3 |"
