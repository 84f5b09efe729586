-- name: rationale_summary
-- title: Rationales — P1 Table 4 layout per model × dataset × strategy, with the shares
-- description: One row per run with the rationales suite and rationale (prompted, occlusion,
--   and the attribution methods attention, saliency, input×gradient where the run has them).
--   n = finished instances; n_gold = those with a non-empty gold rationale where the rationale
--   was scored for plausibility; pct_skipped = 100·(n − n_gold)/n (no gold rationale, i.e.
--   rationale_has_gold = 0, an empty one, or no such rationale). Plausibility (prompted = asked
--   with the gold label shown): iou_f1 (2PR/(P+R) of the mean span precision and recall),
--   token_f1 (macro), token_f1_micro (2·ΣTP / (Σ|R̂| + Σ|R|)), auprc. Faithfulness and
--   complexity (prompted = asked with ŷ shown): comp, suff, flip_rate (%) over the n_faithful
--   instances where both comp and suff are defined (flip is where comp is); cpx = mean entropy of the scores, spr = mean Gini, over cpx_n instances where
--   they are defined (Σv > 0). Shares of the prompted answers (n_answers: one per call, the
--   gold and ŷ shown being one call when equal): pct_empty (no word of the text named),
--   pct_out_of_text (some word named is not in the text), pct_not_k (in-text words ≠ k, over
--   n_with_k answers with a k); occlusion: pct_empty only. agreement_f1 = mean token F1 of
--   the row's rationale against the prompted one (ŷ shown) of the same k, over the
--   agreement_n instances where both exist (occlusion: rationale_alignment_f1; attention,
--   saliency, input×gradient: rationale_alignment_f1_<method>; prompted: NULL, itself).
--   Per run (the same on every row): pct_low_mass (label mass < 0.5), annotator_iou (mean
--   token IoU across annotators, over annotator_iou_n instances). Undefined
--   values are NULL. selection = the strategy with its k or ratio; variant = the prompt
--   (normal, short). Per run, the instances scored by gold label (n_by_label: HateXplain's
--   majority label, hatespeech / offensive / normal / undecided; a number, the share saying
--   toxic, as toxic or non-toxic), the undecided ones (n_undecided: no two annotators agree,
--   no gold label: only ŷ is shown), those whose post tokens do not make their text
--   (n_tokens_mismatch: no gold rationale, docs/methods/rationales.md#2-words-and-masks) and the dataset's posts skipped
--   for a rationale mask of the wrong length (n_bad_mask, §5; haf datasets show --skipped).
--   docs/methods/rationales.md#65-reports.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
WITH selected AS (
    SELECT run_id, model_file, dataset_id,
           json_extract_string(config, '$.settings.rationales.variant') AS variant,
           json_extract_string(config, '$.settings.rationales.strategy') AS strategy,
           TRY_CAST(json_extract(config, '$.settings.rationales.k') AS INTEGER) AS k,
           TRY_CAST(json_extract(config, '$.settings.rationales.ratio') AS DOUBLE) AS ratio
    FROM runs
    WHERE (len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id))
      AND (list_contains(json_extract_string(config, '$.suites[*]'), 'rationales')
           OR run_id IN (SELECT run_id FROM rationales))
),
kinds AS (
    SELECT * FROM (VALUES ('prompted', 'prompt_gold', 'prompt_predicted', 1),
                          ('occlusion', 'occlusion', 'occlusion', 2),
                          ('attention', 'attention', 'attention', 3),
                          ('saliency', 'saliency', 'saliency', 4),
                          ('input×gradient', 'input_x_gradient', 'input_x_gradient', 5))
        AS t(rationale, plausibility_source, faithfulness_source, rationale_order)
),
plausibility AS (
    SELECT run_id, source,
           count(*) AS n_gold,
           avg(iou_precision) AS iou_precision,
           avg(iou_recall) AS iou_recall,
           avg(token_f1) AS token_f1,
           2.0 * sum(true_positives) / nullif(sum(size) + sum(gold_size), 0) AS token_f1_micro,
           avg(auprc) AS auprc
    FROM rationales
    WHERE source IN ('prompt_gold', 'occlusion', 'attention', 'saliency', 'input_x_gradient')
      AND gold_size > 0
      AND run_id IN (SELECT run_id FROM selected)
    GROUP BY ALL
),
faithfulness AS (
    SELECT run_id, source,
           avg(comp) FILTER (WHERE comp IS NOT NULL AND suff IS NOT NULL) AS comp,
           avg(suff) FILTER (WHERE comp IS NOT NULL AND suff IS NOT NULL) AS suff,
           100 * avg(flip) FILTER (WHERE comp IS NOT NULL AND suff IS NOT NULL) AS flip_rate,
           count(*) FILTER (WHERE comp IS NOT NULL AND suff IS NOT NULL) AS n_faithful,
           avg(cpx_entropy) AS cpx,
           avg(spr_gini) AS spr,
           count(cpx_entropy) AS cpx_n,
           100 * avg(CASE WHEN size = 0 THEN 1.0 ELSE 0.0 END) AS pct_empty
    FROM rationales
    WHERE source IN ('prompt_predicted', 'occlusion', 'attention', 'saliency', 'input_x_gradient')
      AND run_id IN (SELECT run_id FROM selected)
    GROUP BY ALL
),
answers AS (  -- one per prompt call: the gold and ŷ shown share a call when they are equal
    SELECT run_id, instance_id, label_shown,
           any_value(size) AS size,
           any_value(k) AS k,
           any_value(coalesce(len(words), 0)) AS n_words,
           any_value(coalesce(len(out_of_text), 0)) AS n_out
    FROM rationales
    WHERE source IN ('prompt_gold', 'prompt_predicted') AND run_id IN (SELECT run_id FROM selected)
    GROUP BY ALL
),
answer_shares AS (
    SELECT run_id,
           count(*) AS n_answers,
           100 * avg(CASE WHEN size = 0 THEN 1.0 ELSE 0.0 END) AS pct_empty,
           100 * avg(CASE WHEN n_out > 0 THEN 1.0 ELSE 0.0 END) AS pct_out_of_text,
           100 * avg(CASE WHEN n_words - n_out <> k THEN 1.0 ELSE 0.0 END)
               FILTER (WHERE k IS NOT NULL) AS pct_not_k,
           count(*) FILTER (WHERE k IS NOT NULL) AS n_with_k
    FROM answers
    GROUP BY run_id
),
instance_values AS (
    SELECT run_id,
           count(*) FILTER (WHERE metric = 'rationale_has_gold') AS n,
           100 * avg(CASE WHEN value < 0.5 THEN 1.0 ELSE 0.0 END)
               FILTER (WHERE metric = 'rationale_label_mass') AS pct_low_mass,
           avg(value) FILTER (WHERE metric = 'rationale_annotator_iou') AS annotator_iou,
           count(value) FILTER (WHERE metric = 'rationale_annotator_iou') AS annotator_iou_n
    FROM instance_metrics
    WHERE metric LIKE 'rationale\_%' ESCAPE '\' AND run_id IN (SELECT run_id FROM selected)
    GROUP BY run_id
),
agreements AS (  -- each source's own agreement with the prompted rationale (§6.4)
    SELECT run_id,
           CASE metric WHEN 'rationale_alignment_f1' THEN 'occlusion'
                ELSE substr(metric, length('rationale_alignment_f1_') + 1) END AS source,
           avg(value) AS agreement_f1,
           count(value) AS agreement_n
    FROM instance_metrics
    WHERE (metric = 'rationale_alignment_f1'
           OR metric LIKE 'rationale\_alignment\_f1\_%' ESCAPE '\')
      AND run_id IN (SELECT run_id FROM selected)
    GROUP BY ALL
),
scored AS (  -- the instances the run finished, by their stored gold label
    SELECT m.run_id,
           CASE WHEN TRY_CAST(i.label AS DOUBLE) IS NULL THEN coalesce(i.label, '(none)')
                WHEN TRY_CAST(i.label AS DOUBLE) >= 0.5 THEN 'toxic'
                ELSE 'non-toxic' END AS label,
           count(*) AS n
    FROM instance_metrics m
    JOIN selected r ON r.run_id = m.run_id
    JOIN instances i ON i.dataset_id = r.dataset_id AND i.instance_id = m.instance_id
    WHERE m.metric = 'rationale_has_gold'
    GROUP BY ALL
),
by_label AS (
    SELECT run_id,
           string_agg(label || ' ' || n, ', ' ORDER BY label) AS n_by_label,
           coalesce(sum(n) FILTER (WHERE label = 'undecided'), 0) AS n_undecided
    FROM scored
    GROUP BY run_id
),
mismatches AS (
    SELECT run_id, count(DISTINCT instance_id) AS n_tokens_mismatch
    FROM parse_diagnostics
    WHERE stage = 'rationale_classify' AND kind = 'no gold rationale'
      AND detail = 'text is not the post tokens joined by spaces'
      AND run_id IN (SELECT run_id FROM selected)
    GROUP BY run_id
),
bad_masks AS (
    SELECT s.run_id, count(*) AS n_bad_mask
    FROM selected s
    JOIN skipped_rows k ON k.dataset_id = s.dataset_id
    WHERE k.reason LIKE 'a rationale mask of the wrong length%'
    GROUP BY s.run_id
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
       coalesce(i.n, 0) AS n,
       coalesce(p.n_gold, 0) AS n_gold,
       100.0 * (coalesce(i.n, 0) - coalesce(p.n_gold, 0)) / nullif(i.n, 0) AS pct_skipped,
       CASE WHEN coalesce(p.n_gold, 0) = 0 THEN NULL
            WHEN coalesce(p.iou_precision, 0) + coalesce(p.iou_recall, 0) = 0 THEN 0.0
            ELSE 2 * coalesce(p.iou_precision, 0) * coalesce(p.iou_recall, 0)
                 / (coalesce(p.iou_precision, 0) + coalesce(p.iou_recall, 0))
       END AS iou_f1,
       p.token_f1,
       p.token_f1_micro,
       p.auprc,
       f.comp,
       f.suff,
       f.flip_rate,
       coalesce(f.n_faithful, 0) AS n_faithful,
       f.cpx,
       f.spr,
       coalesce(f.cpx_n, 0) AS cpx_n,
       CASE k.rationale WHEN 'prompted' THEN a.pct_empty ELSE f.pct_empty END AS pct_empty,
       CASE k.rationale WHEN 'prompted' THEN a.pct_out_of_text END AS pct_out_of_text,
       CASE k.rationale WHEN 'prompted' THEN a.pct_not_k END AS pct_not_k,
       CASE k.rationale WHEN 'prompted' THEN coalesce(a.n_answers, 0) END AS n_answers,
       CASE k.rationale WHEN 'prompted' THEN coalesce(a.n_with_k, 0) END AS n_with_k,
       i.pct_low_mass,
       i.annotator_iou,
       coalesce(i.annotator_iou_n, 0) AS annotator_iou_n,
       ag.agreement_f1,
       CASE k.rationale WHEN 'prompted' THEN NULL ELSE coalesce(ag.agreement_n, 0) END
           AS agreement_n,
       b.n_by_label,
       coalesce(b.n_undecided, 0) AS n_undecided,
       coalesce(mm.n_tokens_mismatch, 0) AS n_tokens_mismatch,
       coalesce(bm.n_bad_mask, 0) AS n_bad_mask
FROM selected s
CROSS JOIN kinds k
LEFT JOIN plausibility p ON p.run_id = s.run_id AND p.source = k.plausibility_source
LEFT JOIN faithfulness f ON f.run_id = s.run_id AND f.source = k.faithfulness_source
LEFT JOIN answer_shares a ON a.run_id = s.run_id
LEFT JOIN instance_values i ON i.run_id = s.run_id
LEFT JOIN agreements ag ON ag.run_id = s.run_id AND ag.source = k.faithfulness_source
LEFT JOIN by_label b ON b.run_id = s.run_id
LEFT JOIN mismatches mm ON mm.run_id = s.run_id
LEFT JOIN bad_masks bm ON bm.run_id = s.run_id
WHERE k.rationale_order <= 2 OR p.run_id IS NOT NULL OR f.run_id IS NOT NULL  -- (an attribution: where the run has it)
ORDER BY s.dataset_id, s.model_file, s.run_id, k.rationale_order
