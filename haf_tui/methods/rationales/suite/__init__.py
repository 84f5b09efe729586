"""rationales plugged into the pipeline: the texts to score, the prompts, the results."""
