-- name: judge_summary
-- title: Judge — the ACORN criteria per judge run (normalised means, Supports mismatches, label mass)
-- description: One row per run with the judge suite. judged = the model whose explanations were
--   rated (the source run's model for a run's explanations, run:RUN_ID or edits:RUN_ID), else
--   the dataset; variant = the prompt wording; mode = constrained or free. n = finished
--   instances, the edited copies of an edits dataset left out (haf judge sensitivity reads
--   them). Per criterion the normalised mean of the label codes, (code − min)/(max − min) over
--   the criterion's codes (Overall 1–5, New information 0–3, binary 0–1; Unnecessary
--   information inverted, 1 − x; Factual N/A left out, no/yes scaled 0–1), with its n = the
--   instances with that label. Supports is nominal: pct_mismatch = % of the n_stance instances
--   with a toxic or non-toxic stance and a Supports label whose label names the other answer
--   (toxic → a, non-toxic → b); n_maybe = instances with the maybe stance (reported apart).
--   Label mass (constrained): pct_low_mass = % of instances with some criterion's mass below
--   $mass_threshold; n_low_mass of n_masses labels. pct_failed (free): % of the criterion
--   answers that gave no readable label, n_failed of them. docs/methods/judge.md.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs),
--   mass_threshold (DOUBLE; default 0.5; a label mass below it is a warning)
WITH selected AS (
    SELECT run_id, model_file, dataset_id,
           json_extract_string(config, '$.settings.judge.prompt') AS variant,
           json_extract_string(config, '$.settings.judge.mode') AS mode
    FROM runs
    WHERE (len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id))
      AND list_contains(json_extract_string(config, '$.suites[*]'), 'judge')
),
judged AS (  -- the finished originals of each run
    SELECT s.run_id, r.instance_id,
           json_extract_string(i.extra, '$.stance') AS stance,
           json_extract_string(i.extra, '$.source_run') AS source_run
    FROM selected s
    JOIN instance_results r ON r.run_id = s.run_id
    JOIN instances i ON i.dataset_id = s.dataset_id AND i.instance_id = r.instance_id
    WHERE json_extract(i.extra, '$.judge_edit') IS NULL
),
criteria AS (  -- haf_tui.judge.criteria: the codes' range of each scored criterion
    SELECT * FROM (VALUES ('overall', 1, 5, false),
                          ('well_written', 0, 1, false),
                          ('related', 0, 1, false),
                          ('factual', 0, 1, false),
                          ('new_info', 0, 3, false),
                          ('unnecessary_info', 0, 1, true),
                          ('contrastive', 0, 1, false))
        AS t(criterion, low, high, inverted)
),
values_ AS (
    SELECT m.run_id, m.instance_id, m.metric, m.value
    FROM instance_metrics m
    JOIN judged j ON j.run_id = m.run_id AND j.instance_id = m.instance_id
    WHERE m.metric LIKE 'judge\_%' ESCAPE '\'
),
normalised AS (
    SELECT v.run_id, c.criterion,
           avg(CASE WHEN c.inverted THEN 1 - (v.value - c.low) / (c.high - c.low)
                    ELSE (v.value - c.low) / (c.high - c.low) END) AS mean,
           count(*) AS n
    FROM values_ v
    JOIN criteria c ON v.metric = 'judge_' || c.criterion
    WHERE v.value IS NOT NULL AND NOT (c.criterion = 'factual' AND v.value = -1)
    GROUP BY ALL
),
wide AS (
    SELECT run_id,
           any_value(mean) FILTER (WHERE criterion = 'overall') AS overall,
           coalesce(any_value(n) FILTER (WHERE criterion = 'overall'), 0) AS overall_n,
           any_value(mean) FILTER (WHERE criterion = 'well_written') AS well_written,
           coalesce(any_value(n) FILTER (WHERE criterion = 'well_written'), 0) AS well_written_n,
           any_value(mean) FILTER (WHERE criterion = 'related') AS related,
           coalesce(any_value(n) FILTER (WHERE criterion = 'related'), 0) AS related_n,
           any_value(mean) FILTER (WHERE criterion = 'factual') AS factual,
           coalesce(any_value(n) FILTER (WHERE criterion = 'factual'), 0) AS factual_n,
           any_value(mean) FILTER (WHERE criterion = 'new_info') AS new_info,
           coalesce(any_value(n) FILTER (WHERE criterion = 'new_info'), 0) AS new_info_n,
           any_value(mean) FILTER (WHERE criterion = 'unnecessary_info') AS unnecessary_info,
           coalesce(any_value(n) FILTER (WHERE criterion = 'unnecessary_info'), 0)
               AS unnecessary_info_n,
           any_value(mean) FILTER (WHERE criterion = 'contrastive') AS contrastive,
           coalesce(any_value(n) FILTER (WHERE criterion = 'contrastive'), 0) AS contrastive_n
    FROM normalised
    GROUP BY run_id
),
shares AS (
    SELECT run_id,
           100 * (1 - avg(value) FILTER (WHERE metric = 'judge_supports_matches'))
               AS pct_mismatch,
           count(value) FILTER (WHERE metric = 'judge_supports_matches') AS n_stance,
           count(*) FILTER (WHERE metric LIKE 'judge\_%\_mass' ESCAPE '\') AS n_masses,
           count(*) FILTER (WHERE metric LIKE 'judge\_%\_mass' ESCAPE '\'
                            AND value < $mass_threshold) AS n_low_mass,
           count(DISTINCT instance_id) FILTER (WHERE metric LIKE 'judge\_%\_mass' ESCAPE '\'
                                               AND value < $mass_threshold) AS n_low_mass_instances,
           count(*) FILTER (WHERE metric LIKE 'judge\_%\_failed' ESCAPE '\') AS n_failed,
           count(*) FILTER (WHERE metric LIKE 'judge\_%\_failed' ESCAPE '\'
                            OR metric = 'judge_supports'
                            OR metric IN (SELECT 'judge_' || criterion FROM criteria))
               AS n_answers
    FROM values_
    GROUP BY run_id
),
counts AS (
    SELECT run_id,
           count(*) AS n,
           count(*) FILTER (WHERE stance = 'maybe') AS n_maybe,
           any_value(source_run) AS source_run
    FROM judged
    GROUP BY run_id
)
SELECT s.run_id,
       s.model_file,
       coalesce(src.model_file, s.dataset_id) AS judged,
       s.dataset_id,
       c.source_run,
       s.variant,
       s.mode,
       coalesce(c.n, 0) AS n,
       w.overall, coalesce(w.overall_n, 0) AS overall_n,
       w.well_written, coalesce(w.well_written_n, 0) AS well_written_n,
       w.related, coalesce(w.related_n, 0) AS related_n,
       w.factual, coalesce(w.factual_n, 0) AS factual_n,
       w.new_info, coalesce(w.new_info_n, 0) AS new_info_n,
       w.unnecessary_info, coalesce(w.unnecessary_info_n, 0) AS unnecessary_info_n,
       w.contrastive, coalesce(w.contrastive_n, 0) AS contrastive_n,
       sh.pct_mismatch,
       coalesce(sh.n_stance, 0) AS n_stance,
       coalesce(c.n_maybe, 0) AS n_maybe,
       CASE WHEN s.mode = 'constrained'
            THEN 100.0 * coalesce(sh.n_low_mass_instances, 0) / nullif(c.n, 0) END
           AS pct_low_mass,
       CASE WHEN s.mode = 'constrained' THEN coalesce(sh.n_low_mass, 0) END AS n_low_mass,
       CASE WHEN s.mode = 'constrained' THEN coalesce(sh.n_masses, 0) END AS n_masses,
       CASE WHEN s.mode = 'free'
            THEN 100.0 * coalesce(sh.n_failed, 0) / nullif(sh.n_answers, 0) END AS pct_failed,
       CASE WHEN s.mode = 'free' THEN coalesce(sh.n_failed, 0) END AS n_failed
FROM selected s
LEFT JOIN counts c ON c.run_id = s.run_id
LEFT JOIN runs src ON src.run_id = c.source_run
LEFT JOIN wide w ON w.run_id = s.run_id
LEFT JOIN shares sh ON sh.run_id = s.run_id
ORDER BY s.dataset_id, s.model_file, s.run_id
