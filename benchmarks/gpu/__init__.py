"""The GPU check (``make gpu-check``, issue 37 §3) and llama-server's build."""
