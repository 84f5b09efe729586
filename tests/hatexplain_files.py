"""HateXplain's ``dataset.json`` (with ``post_id_divisions.json`` beside it) written by the
tests themselves, in the exact format of github.com/hate-alert/HateXplain's ``Data/``: post
id → post_id, post_tokens, annotators (label, annotator_id, target) and rationales (0/1 lists
as long as post_tokens, from the annotators who marked the post toxic)."""

from __future__ import annotations

import json
from pathlib import Path

P1_TEXT = (
    "those that are for illegal immigration and islamic culture refugees are idiot liberal "
    "progressives and globalists skills"
)
P1_TOKENS = P1_TEXT.split()
"""P1's Table 5 post (spec RATIONALES.md §8, example 2)."""
P1_MARKED = (
    {4, 5, 7, 12, 13, 15},
    {5, 7, 8, 9, 11, 12, 13, 15},
    {4, 5, 7, 13, 15},
)
"""Its three annotators' rationales (token indices); HARD is {4, 5, 7, 12, 13, 15}."""

INSULT_TEXT = (
    "you are a worthless idiot and everyone at this forum would be better off if you shut up"
)
INSULT_TOKENS = INSULT_TEXT.split()
INSULT_MARKED = ({3, 4}, {3, 4, 16, 17})


def mask(tokens: list[str], marked: set[int]) -> list[int]:
    """A 0/1 list over the tokens."""
    return [1 if i in marked else 0 for i in range(len(tokens))]


def write_hatexplain(
    folder: Path, posts: list[tuple[str, list[str], list[str], list[set[int]]]]
) -> Path:
    """``folder/dataset.json`` from (post id, tokens, the annotators' labels, the marked
    token indices of each rationale), every post in the train split; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    data = {
        post_id: {
            "post_id": post_id,
            "annotators": [
                {"label": label, "annotator_id": 100 + k, "target": ["None"]}
                for k, label in enumerate(labels)
            ],
            "rationales": [mask(tokens, marked) for marked in rationales],
            "post_tokens": tokens,
        }
        for post_id, tokens, labels, rationales in posts
    }
    path = folder / "dataset.json"
    path.write_text(json.dumps(data))
    (folder / "post_id_divisions.json").write_text(
        json.dumps({"train": list(data), "val": [], "test": []})
    )
    return path


def two_posts(folder: Path) -> Path:
    """P1's Table 5 post (three rationales) and an insult (two)."""
    return write_hatexplain(
        folder,
        [
            ("p1_gab", P1_TOKENS, ["hatespeech", "offensive", "hatespeech"], list(P1_MARKED)),
            (
                "p2_twitter",
                INSULT_TOKENS,
                ["offensive", "offensive", "normal"],
                list(INSULT_MARKED),
            ),
        ],
    )


NORMAL_TEXT = "thanks for the bus timetable it was kind of you"
UNDECIDED_TEXT = "they should all go back where they came from idiot"
SPACED_TOKENS = ["you", "worthless idiot", "go", "away"]
"""A post whose tokens do not make its words: one token holds a space."""
BAD_MASK_TOKENS = ["you", "are", "a", "worthless", "idiot"]


def edge_case_posts(folder: Path) -> Path:
    """Every kind of post the rationales suite meets (issue 27): hate (P1's Table 5), two
    offensive ones (the insult; one whose tokens hold a space), two normal ones (one with an
    annotator saying offensive), an undecided one (three labels) and one whose second
    rationale mask is a token short."""
    path = write_hatexplain(
        folder,
        [
            ("hate", P1_TOKENS, ["hatespeech", "offensive", "hatespeech"], list(P1_MARKED)),
            ("insult", INSULT_TOKENS, ["offensive", "offensive", "normal"], list(INSULT_MARKED)),
            ("normal", NORMAL_TEXT.split(), ["normal"] * 3, []),
            (
                "normal2",
                ["see", "you", "at", "the", "game", "tonight"],
                ["normal", "normal", "offensive"],
                [],
            ),
            ("undecided", UNDECIDED_TEXT.split(), ["hatespeech", "offensive", "normal"], []),
            ("spaced", SPACED_TOKENS, ["offensive"] * 3, [{1}, {1, 3}]),
            ("bad_mask", BAD_MASK_TOKENS, ["hatespeech"] * 3, [{3, 4}, {3, 4}]),
        ],
    )
    data = json.loads(path.read_text())
    data["bad_mask"]["rationales"][1] = [0, 0, 0, 1]  # one value short
    path.write_text(json.dumps(data))
    return path
