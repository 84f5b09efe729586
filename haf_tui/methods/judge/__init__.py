"""The 8-criterion LLM judge of explanation quality (spec ``JUDGE.md``)."""
