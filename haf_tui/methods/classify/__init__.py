"""classify: label scores p(y | x) by teacher forcing (spec ``RATIONALES.md`` §4.1)."""
