"""HAF plugged into the pipeline: stages, the plan of an instance, records (TokenSAR
scores) and instance metrics."""
