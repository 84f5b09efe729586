-- name: notes
-- title: Notes and bookmarks on instances
-- description: Every instance a researcher bookmarked or wrote a note on (the explorer's b and
--   w keys), newest first: the run with its label, model and dataset, the instance's text and
--   gold label, its JUSTIFY stance, the bookmark and the note, and when it was last changed.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
SELECT n.run_id,
       r.label AS run_label,
       r.model_file,
       r.dataset_id,
       n.instance_id,
       i.text,
       i.label,
       ir.stance,
       n.bookmarked,
       n.note,
       n.updated_at
FROM instance_notes n
JOIN runs r USING (run_id)
LEFT JOIN instances i ON i.dataset_id = r.dataset_id AND i.instance_id = n.instance_id
LEFT JOIN instance_results ir ON ir.run_id = n.run_id AND ir.instance_id = n.instance_id
WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], n.run_id)
ORDER BY n.updated_at DESC, n.run_id, i.position
