-- name: skipped_rows
-- title: Skipped rows of a dataset, with why
-- description: Every row left out of a stored dataset because it cannot be evaluated (empty,
--   whitespace-only, too long, not UTF-8, duplicate id or text, no label): the dataset, the
--   row's 1-based number in the source (data rows; lines for JSONL), the reason, a short excerpt,
--   and how many rows share that reason in that dataset (n_with_reason).
-- params: dataset (VARCHAR; default ''; a dataset's name or id, '' = every dataset)
SELECT d.name AS dataset,
       s.dataset_id,
       s.row_number,
       s.reason,
       s.excerpt,
       count(*) OVER (PARTITION BY s.dataset_id, s.reason) AS n_with_reason
FROM skipped_rows s
JOIN datasets d USING (dataset_id)
WHERE $dataset = '' OR d.name = $dataset OR d.dataset_id = $dataset
ORDER BY d.created_at, s.dataset_id, s.row_number
