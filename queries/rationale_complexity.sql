-- name: rationale_complexity
-- title: Rationales — complexity and sparsity (P1 Table 4 CPX, SPR; all definitions apart)
-- description: Per run with the rationales suite (model × dataset × strategy) and rationale
--   source as stored: prompted with the gold label shown (prompt_gold), with ŷ shown
--   (prompt_predicted), occlusion, human (HARD), random (all seeds pooled) and everything.
--   Scores v = |a_i| for occlusion, the 0/1 mask otherwise; q_i = v_i / Σv.
--   cpx_entropy = mean H = −Σ q ln q; cpx_entropy_norm = mean H / ln n (n ≥ 2);
--   spr_gini = mean Gini of v; cpx_ratio = mean |R̂|/n; spr_ratio = mean 1 − |R̂|/n.
--   n = rationales (instances; instances × seeds for random, over the seeds every instance
--   has: adaptive RANDOM asks each its own number); *_n = those where the value is
--   defined; n_undefined = those with Σv = 0 (an empty rationale, or all-zero occlusion
--   scores), where entropy and Gini are undefined (stored NULL, left out of the means).
--   selection = the strategy with its k or ratio; variant = the prompt (normal, short).
--   docs/methods/rationales.md#63-complexity.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
WITH selected AS (
    SELECT run_id, model_file, dataset_id,
           json_extract_string(config, '$.settings.rationales.variant') AS variant,
           json_extract_string(config, '$.settings.rationales.strategy') AS strategy,
           TRY_CAST(json_extract(config, '$.settings.rationales.k') AS INTEGER) AS k,
           TRY_CAST(json_extract(config, '$.settings.rationales.ratio') AS DOUBLE) AS ratio
    FROM runs
    WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id)
),
kinds AS (
    SELECT * FROM (VALUES ('prompt_gold', 'prompted, gold shown', 1),
                          ('prompt_predicted', 'prompted, ŷ shown', 2),
                          ('occlusion', 'occlusion', 3), ('attention', 'attention', 4),
                          ('saliency', 'saliency', 5),
                          ('input_x_gradient', 'input×gradient', 6), ('human', 'human', 7),
                          ('random', 'random', 8), ('everything', 'everything', 9))
        AS t(source, rationale, rationale_order)
),
common AS (  -- the RANDOM seeds every instance has (adaptive RANDOM: each its own number)
    SELECT run_id, min(n_i) AS common_seeds
    FROM (SELECT run_id, instance_id, count(*) AS n_i FROM rationales
          WHERE source = 'random' AND run_id IN (SELECT run_id FROM selected) GROUP BY ALL)
    GROUP BY run_id
)
SELECT s.run_id,
       s.model_file,
       s.dataset_id,
       s.strategy,
       s.variant,
       s.strategy || CASE s.strategy WHEN 'top_k' THEN ' k=' || s.k
                                     WHEN 'top_ratio' THEN ' ' || round(100 * s.ratio, 1) || '%'
                                     ELSE '' END AS selection,
       k.rationale,
       r.source,
       count(*) AS n,
       avg(r.cpx_entropy) AS cpx_entropy,
       count(r.cpx_entropy) AS cpx_entropy_n,
       avg(r.cpx_entropy_norm) AS cpx_entropy_norm,
       count(r.cpx_entropy_norm) AS cpx_entropy_norm_n,
       avg(r.spr_gini) AS spr_gini,
       count(r.spr_gini) AS spr_gini_n,
       avg(r.cpx_ratio) AS cpx_ratio,
       avg(r.spr_ratio) AS spr_ratio,
       count(r.cpx_ratio) AS ratio_n,
       count(*) - count(r.cpx_entropy) AS n_undefined
FROM rationales r
JOIN selected s USING (run_id)
JOIN kinds k USING (source)
LEFT JOIN common c USING (run_id)
WHERE r.source <> 'random' OR r.seed < c.common_seeds
GROUP BY s.run_id, s.model_file, s.dataset_id, s.strategy, s.variant, s.k, s.ratio,
         k.rationale, r.source, k.rationale_order
ORDER BY s.dataset_id, s.model_file, s.run_id, k.rationale_order
