"""HAF's method, pure and public: the prompts, the answer parser and the metrics."""
