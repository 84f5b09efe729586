-- name: rationale_plausibility
-- title: Rationales — plausibility against the annotators (P1 Table 4; P2 Table 2)
-- description: Per run with the rationales suite (model × dataset × strategy) and rationale:
--   prompted (the prompt_gold rows: the gold label shown), occlusion (top-k by leave-one-out
--   log-odds) and random (RANDOM of Top-Var size, one row per seed). Only instances with a
--   non-empty gold rationale (the run's gold: HARD, or UNION) count; n = those instances
--   (for random: per seed). iou_f1 = 2PR/(P+R) of iou_precision (mean over instances with a
--   predicted span, iou_precision_n of them) and iou_recall (mean over instances with a gold
--   span), 0 when there is a gold but no match; token_f1 = macro token-F1 (mean of instance
--   F1), token_f1_micro = 2·ΣTP / (Σ|R̂| + Σ|R|) over the same instances; token_f1_union =
--   macro token-F1 against UNION (HateXplain's own gold); auprc / soft_auprc = mean AUPRC
--   with HARD / SOFT as truth (undefined ones left out, *_n counted).
--   alignment_f1_x100 = 100 · token_f1 (P2's alignment F1). Random: every column is the mean
--   over seeds of the per-seed dataset value; *_sd the sample standard deviation over seeds
--   (n_seeds of them; NULL with one seed); with adaptive RANDOM (instances with different
--   numbers of seeds) over the seeds every instance has. selection = the strategy with its k or ratio;
--   variant = the prompt (normal, short). docs/methods/rationales.md#61-plausibility, docs/methods/rationales.md#65-reports.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
WITH selected AS (
    SELECT run_id, model_file, dataset_id,
           json_extract_string(config, '$.settings.rationales.variant') AS variant,
           json_extract_string(config, '$.settings.rationales.strategy') AS strategy,
           TRY_CAST(json_extract(config, '$.settings.rationales.k') AS INTEGER) AS k,
           TRY_CAST(json_extract(config, '$.settings.rationales.ratio') AS DOUBLE) AS ratio,
           json_extract_string(config, '$.settings.rationales.gold') AS gold
    FROM runs
    WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id)
),
kinds AS (
    SELECT * FROM (VALUES ('prompt_gold', 'prompted', 1), ('occlusion', 'occlusion', 2),
                          ('attention', 'attention', 3), ('saliency', 'saliency', 4),
                          ('input_x_gradient', 'input×gradient', 5),
                          ('random', 'random', 6)) AS t(source, rationale, rationale_order)
),
random_seeds AS (  -- RANDOM masks per instance: all alike, or adaptive (each its own)
    SELECT run_id, instance_id, count(*) AS n_i
    FROM rationales
    WHERE source = 'random' AND run_id IN (SELECT run_id FROM selected)
    GROUP BY ALL
),
common AS (  -- the seeds every instance has, and whether instances differ (adaptive)
    SELECT run_id, min(n_i) AS common_seeds, min(n_i) < max(n_i) AS adaptive
    FROM random_seeds
    GROUP BY run_id
),
per_seed AS (
    SELECT run_id, source, seed,
           count(*) FILTER (WHERE gold_size > 0) AS n,
           avg(iou_precision) FILTER (WHERE gold_size > 0) AS iou_precision,
           count(iou_precision) FILTER (WHERE gold_size > 0) AS iou_precision_n,
           avg(iou_recall) FILTER (WHERE gold_size > 0) AS iou_recall,
           count(iou_recall) FILTER (WHERE gold_size > 0) AS iou_recall_n,
           avg(token_f1) FILTER (WHERE gold_size > 0) AS token_f1,
           sum(true_positives) FILTER (WHERE gold_size > 0) AS tp,
           sum(size) FILTER (WHERE gold_size > 0) AS predicted_size,
           sum(gold_size) FILTER (WHERE gold_size > 0) AS gold_total,
           avg(token_f1_union) FILTER (WHERE gold_size > 0) AS token_f1_union,
           avg(auprc) FILTER (WHERE gold_size > 0) AS auprc,
           count(auprc) FILTER (WHERE gold_size > 0) AS auprc_n,
           avg(soft_auprc) FILTER (WHERE gold_size > 0) AS soft_auprc,
           count(soft_auprc) FILTER (WHERE gold_size > 0) AS soft_auprc_n
    FROM rationales
    LEFT JOIN common USING (run_id)
    WHERE source IN (SELECT source FROM kinds) AND run_id IN (SELECT run_id FROM selected)
          AND (source <> 'random' OR seed < common_seeds)
    GROUP BY run_id, source, seed
),
with_f1 AS (
    SELECT *,
           CASE WHEN n = 0 THEN NULL
                WHEN coalesce(iou_precision, 0) + coalesce(iou_recall, 0) = 0 THEN 0.0
                ELSE 2 * coalesce(iou_precision, 0) * coalesce(iou_recall, 0)
                     / (coalesce(iou_precision, 0) + coalesce(iou_recall, 0))
           END AS iou_f1,
           CASE WHEN n = 0 THEN NULL
                ELSE 2.0 * tp / nullif(predicted_size + gold_total, 0)
           END AS token_f1_micro
    FROM per_seed
)
SELECT s.run_id,
       s.model_file,
       s.dataset_id,
       s.strategy,
       s.variant,
       s.strategy || CASE s.strategy WHEN 'top_k' THEN ' k=' || s.k
                                     WHEN 'top_ratio' THEN ' ' || round(100 * s.ratio, 1) || '%'
                                     ELSE '' END AS selection,
       s.gold,
       k.rationale,
       f.source,
       count(*) AS n_seeds,
       max(f.n) AS n,
       avg(f.iou_f1) AS iou_f1,
       stddev_samp(f.iou_f1) AS iou_f1_sd,
       avg(f.iou_precision) AS iou_precision,
       max(f.iou_precision_n) AS iou_precision_n,
       avg(f.iou_recall) AS iou_recall,
       max(f.iou_recall_n) AS iou_recall_n,
       avg(f.token_f1) AS token_f1,
       stddev_samp(f.token_f1) AS token_f1_sd,
       avg(f.token_f1_micro) AS token_f1_micro,
       avg(f.token_f1_union) AS token_f1_union,
       avg(f.auprc) AS auprc,
       max(f.auprc_n) AS auprc_n,
       avg(f.soft_auprc) AS soft_auprc,
       max(f.soft_auprc_n) AS soft_auprc_n,
       100 * avg(f.token_f1) AS alignment_f1_x100,
       100 * stddev_samp(f.token_f1) AS alignment_f1_x100_sd
FROM with_f1 f
JOIN selected s USING (run_id)
JOIN kinds k USING (source)
GROUP BY s.run_id, s.model_file, s.dataset_id, s.strategy, s.variant, s.k, s.ratio,
         s.gold, k.rationale, f.source, k.rationale_order
ORDER BY s.dataset_id, s.model_file, s.run_id, k.rationale_order
