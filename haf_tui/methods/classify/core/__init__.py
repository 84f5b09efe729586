"""classify's method, pure: the prompt and the label scores (also used by rationales)."""
