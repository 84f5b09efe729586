"""The rationales method's tables after its first (``Method.migrations``, numbered in the
method's sequence after ``rationales``, its migration 1 in ``records``; never edit a released
one: add the next)."""

from __future__ import annotations

from typing import Final

from haf_tui.store.method_tables import MethodMigration

GRADIENT_TABLE = MethodMigration(
    2,
    "rationales_gradient: the rationale_gradient stage's word scores and the quantisation gap",
    """CREATE TABLE IF NOT EXISTS rationales_gradient (
        run_id VARCHAR NOT NULL,
        instance_id VARCHAR NOT NULL,
        spelling VARCHAR,          -- ŷ's first spelling, teacher-forced after the prompt
        words VARCHAR[],           -- the text's word tokens
        torch_logprob DOUBLE,      -- T: the spelling's log-probability in torch
        llama_logprob DOUBLE,      -- the same in llama.cpp (rationale_classify)
        gap DOUBLE,                -- torch_logprob - llama_logprob (the quantisation gap)
        seconds DOUBLE,            -- the forward and backward pass
        attention DOUBLE[],        -- each method's word scores (normalised to sum 1)
        saliency DOUBLE[],
        input_x_gradient DOUBLE[],
        PRIMARY KEY (run_id, instance_id)
    )""",
)
PROMPT_IDS = MethodMigration(
    3,
    "rationales_gradient.prompt_ids: the classification prompt's token ids the pass read",
    # (llama.cpp's ids of the rendered prompt, BOS included; NULL in rows stored before)
    "ALTER TABLE rationales_gradient ADD COLUMN IF NOT EXISTS prompt_ids INTEGER[]",
)
RATIONALE_MIGRATIONS: Final[tuple[MethodMigration, ...]] = (GRADIENT_TABLE, PROMPT_IDS)
