"""judge plugged into the pipeline: the forced or free answers of each item."""
