-- name: classification
-- title: Label scores (classify suite)
-- description: Per run with the classify suite: instances classified (n), the share predicted
--   toxic (pct_toxic, ŷ = argmax p(y | x)), the mean p(toxic | x), the share whose label mass
--   (the probability of answering with a label at all) is below 0.5 (pct_low_mass: the model
--   wanted to say something else), accuracy against the gold label where it is toxic or
--   non-toxic (n_gold, pct_correct; the instance's label as its dataset's label rule stored
--   it, and every HateXplain post's class: hatespeech or offensive is toxic, normal
--   non-toxic, undecided no gold), and agreement with HAF's JUSTIFY stance where that is
--   toxic or non-toxic (n_stance, pct_agree_stance). docs/methods/classify.md#2-label-scores.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
WITH selected AS (
    SELECT run_id, model_file, dataset_id
    FROM runs
    WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id)
),
scores AS (
    SELECT run_id, instance_id,
           max(value) FILTER (WHERE metric = 'classify_p_toxic') AS p_toxic,
           max(value) FILTER (WHERE metric = 'classify_label_mass') AS label_mass,
           max(value) FILTER (WHERE metric = 'classify_toxic') AS predicted_toxic
    FROM instance_metrics
    WHERE metric LIKE 'classify\_%' ESCAPE '\'
      AND run_id IN (SELECT run_id FROM selected)
    GROUP BY ALL
),
joined AS (
    SELECT sc.run_id, sc.instance_id, sc.p_toxic, sc.label_mass, sc.predicted_toxic,
           s.model_file, s.dataset_id, r.stance,
           CASE WHEN i.label IN ('toxic', 'hatespeech', 'offensive') THEN 'toxic'
                WHEN i.label IN ('non-toxic', 'normal') THEN 'non-toxic' END AS label
    FROM scores sc
    JOIN selected s USING (run_id)
    JOIN instances i ON i.dataset_id = s.dataset_id AND i.instance_id = sc.instance_id
    LEFT JOIN instance_results r ON r.run_id = sc.run_id AND r.instance_id = sc.instance_id
)
SELECT run_id,
       model_file,
       dataset_id,
       count(*) AS n,
       100 * avg(predicted_toxic) AS pct_toxic,
       avg(p_toxic) AS mean_p_toxic,
       100 * avg(CASE WHEN label_mass < 0.5 THEN 1.0 ELSE 0.0 END) AS pct_low_mass,
       count(*) FILTER (WHERE label IN ('toxic', 'non-toxic')) AS n_gold,
       100 * avg(CASE WHEN (label = 'toxic') = (predicted_toxic = 1) THEN 1.0 ELSE 0.0 END)
           FILTER (WHERE label IN ('toxic', 'non-toxic')) AS pct_correct,
       count(*) FILTER (WHERE stance IN ('toxic', 'non-toxic')) AS n_stance,
       100 * avg(CASE WHEN (stance = 'toxic') = (predicted_toxic = 1) THEN 1.0 ELSE 0.0 END)
           FILTER (WHERE stance IN ('toxic', 'non-toxic')) AS pct_agree_stance
FROM joined
GROUP BY ALL
ORDER BY dataset_id, model_file, run_id
