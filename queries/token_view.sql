-- name: token_view
-- title: Tokens of one generation — logprob, NLL, top-k
-- description: Every generated token of one generation in order: its text and bytes (hex),
--   offsets (a re-scored run's are its parent's), log p under the raw distribution, NLL = −log p, p, the top-k alternatives (ids,
--   logprobs and texts), whether it overlaps the decision sentence, and the reason covering it
--   (by the reason's token_first / token_count) with the token's TokenSAR relevance in it.
-- params: run_id (VARCHAR; a run id or a unique prefix), instance_id (VARCHAR),
--   stage (VARCHAR; justify, internal, external or individual),
--   sub_index (INTEGER; default -1; the JUSTIFY reason j of an individual prompt, else -1)
WITH generation AS (
    SELECT decision_start, decision_end
    FROM generations
    WHERE run_id = $run_id AND instance_id = $instance_id
      AND stage = $stage AND sub_index = $sub_index
),
spans AS (
    SELECT reason_index, token_first, token_count, relevance
    FROM reasons
    WHERE run_id = $run_id AND instance_id = $instance_id
      AND stage = $stage AND sub_index = $sub_index AND token_first IS NOT NULL
)
SELECT t.position,
       t.text,
       hex(t.piece) AS piece_hex,
       t.token_id,
       t.char_offset,
       t.byte_offset,
       t.logprob,
       -t.logprob AS nll,
       exp(t.logprob) AS p,
       coalesce(t.char_offset < g.decision_end
                AND t.char_offset + length(t.text) > g.decision_start, false)
           AS in_decision,
       s.reason_index,
       s.relevance[t.position - s.token_first + 1] AS relevance,
       t.top_ids,
       t.top_logprobs,
       t.top_texts
FROM tokens t
LEFT JOIN generation g ON true
LEFT JOIN spans s
  ON t.position >= s.token_first AND t.position < s.token_first + s.token_count
WHERE t.run_id = (SELECT coalesce(parent_run_id, run_id) FROM runs WHERE run_id = $run_id)
  AND t.instance_id = $instance_id
  AND t.stage = $stage AND t.sub_index = $sub_index
QUALIFY row_number() OVER (PARTITION BY t.position ORDER BY s.reason_index) = 1
ORDER BY t.position
