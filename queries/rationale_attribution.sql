-- name: rationale_attribution
-- title: Rationales — prompting vs attribution (P2 Table 2, Tables 4/5, Figure 4)
-- description: Per run with the rationales suite and rationale: prompted, occlusion and the
--   attribution methods attention, saliency and input×gradient (the rationale_gradient stage),
--   with the baselines human (HARD), random (Top-Var size, one mask per seed) and everything.
--   alignment_f1_x100 = 100 · mean token-F1 against the run's gold over the alignment_n
--   instances with a non-empty gold (P2 Table 2; prompted: the gold label shown); random: the
--   mean over seeds of the per-seed value, *_sd their sample standard deviation (n_seeds
--   seeds every instance has). flip_rate = 100 · mean flip (argmax without R ≠ ŷ; prompted:
--   ŷ shown) over flip_n instances, words_removed = mean |R| there (P2 Tables 4, 5 and 9);
--   random as above. skewness = mean over instances of the Fisher–Pearson coefficient of the
--   method's word scores, skewness_sd their sample standard deviation, over skewness_n
--   instances (P2 Figure 4; occlusion: its leave-one-out scores). quant_gap_mean /
--   quant_gap_max = mean and largest |torch log p(ŷ) − llama.cpp log p(ŷ)| over quant_gap_n
--   instances: the GGUF's weights dequantised into torch against llama.cpp on the same file
--   (the same on every row of a run). docs/methods/rationales.md#44-attention-saliency-and-inputgradient.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
WITH selected AS (
    SELECT run_id, model_file, dataset_id,
           json_extract_string(config, '$.settings.rationales.strategy') AS strategy,
           TRY_CAST(json_extract(config, '$.settings.rationales.k') AS INTEGER) AS k,
           TRY_CAST(json_extract(config, '$.settings.rationales.ratio') AS DOUBLE) AS ratio
    FROM runs
    WHERE (len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id))
      AND run_id IN (SELECT run_id FROM rationales)
),
kinds AS (
    SELECT * FROM (VALUES ('prompted', 'prompt_gold', 'prompt_predicted', 'prompted', 1),
                          ('occlusion', 'occlusion', 'occlusion', 'occlusion', 2),
                          ('attention', 'attention', 'attention', 'attention', 3),
                          ('saliency', 'saliency', 'saliency', 'saliency', 4),
                          ('input×gradient', 'input_x_gradient', 'input_x_gradient',
                           'input_x_gradient', 5),
                          ('human', NULL, 'human', NULL, 6),
                          ('random', 'random', 'random', NULL, 7),
                          ('everything', NULL, 'everything', NULL, 8))
        AS t(rationale, alignment_source, flip_source, skew_source, rationale_order)
),
common AS (  -- the RANDOM seeds every instance has
    SELECT run_id, min(n_i) AS common_seeds
    FROM (SELECT run_id, instance_id, count(*) AS n_i FROM rationales
          WHERE source = 'random' GROUP BY ALL)
    GROUP BY run_id
),
usable AS (
    SELECT r.* FROM rationales r LEFT JOIN common c USING (run_id)
    WHERE r.run_id IN (SELECT run_id FROM selected)
      AND (r.source <> 'random' OR r.seed < c.common_seeds)
),
alignment_seeds AS (
    SELECT run_id, source, seed, 100 * avg(token_f1) AS f1, count(token_f1) AS n
    FROM usable WHERE gold_size > 0 AND token_f1 IS NOT NULL
    GROUP BY ALL
),
alignment AS (
    SELECT run_id, source, avg(f1) AS alignment_f1_x100, stddev_samp(f1) AS alignment_f1_x100_sd,
           max(n) AS alignment_n, count(*) AS n_seeds
    FROM alignment_seeds GROUP BY ALL
),
flip_seeds AS (
    SELECT run_id, source, seed, 100 * avg(flip) AS flip_rate,
           avg(size) FILTER (WHERE flip IS NOT NULL) AS words_removed, count(flip) AS n
    FROM usable WHERE flip IS NOT NULL
    GROUP BY ALL
),
flips AS (
    SELECT run_id, source, avg(flip_rate) AS flip_rate, stddev_samp(flip_rate) AS flip_rate_sd,
           avg(words_removed) AS words_removed, max(n) AS flip_n, count(*) AS n_seeds
    FROM flip_seeds GROUP BY ALL
),
skews AS (
    SELECT run_id, substr(metric, length('rationale_skew_') + 1) AS source,
           avg(value) AS skewness, stddev_samp(value) AS skewness_sd, count(value) AS skewness_n
    FROM instance_metrics
    WHERE metric LIKE 'rationale\_skew\_%' ESCAPE '\' AND run_id IN (SELECT run_id FROM selected)
    GROUP BY ALL
),
gaps AS (
    SELECT run_id, avg(abs(value)) AS quant_gap_mean, max(abs(value)) AS quant_gap_max,
           count(value) AS quant_gap_n
    FROM instance_metrics
    WHERE metric = 'rationale_quant_gap' AND run_id IN (SELECT run_id FROM selected)
    GROUP BY ALL
)
SELECT s.run_id,
       s.model_file,
       s.dataset_id,
       s.strategy || CASE s.strategy WHEN 'top_k' THEN ' k=' || s.k
                                     WHEN 'top_ratio' THEN ' ' || round(100 * s.ratio, 1) || '%'
                                     ELSE '' END AS selection,
       k.rationale,
       a.alignment_f1_x100,
       a.alignment_f1_x100_sd,
       a.alignment_n,
       coalesce(a.n_seeds, f.n_seeds) AS n_seeds,
       f.flip_rate,
       f.flip_rate_sd,
       f.words_removed,
       f.flip_n,
       w.skewness,
       w.skewness_sd,
       w.skewness_n,
       g.quant_gap_mean,
       g.quant_gap_max,
       g.quant_gap_n
FROM selected s
CROSS JOIN kinds k
LEFT JOIN alignment a ON a.run_id = s.run_id AND a.source = k.alignment_source
LEFT JOIN flips f ON f.run_id = s.run_id AND f.source = k.flip_source
LEFT JOIN skews w ON w.run_id = s.run_id AND w.source = k.skew_source
LEFT JOIN gaps g ON g.run_id = s.run_id
WHERE a.run_id IS NOT NULL OR f.run_id IS NOT NULL OR w.run_id IS NOT NULL
ORDER BY s.dataset_id, s.model_file, s.run_id, k.rationale_order
