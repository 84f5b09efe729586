"""The 8-criterion LLM judge of explanation quality (``docs/methods/judge.md``)."""
