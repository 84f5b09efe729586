"""classify: label scores p(y | x) by teacher forcing
(``docs/methods/classify.md#2-label-scores``)."""
