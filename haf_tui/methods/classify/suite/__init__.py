"""classify plugged into the pipeline: four forced spellings per instance."""
