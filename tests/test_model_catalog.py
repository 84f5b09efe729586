"""The wizard's model list and Hugging Face downloads (through the real huggingface-hub against
a local server that answers like the Hub; offline and unreachable cases fail at once)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from haf_tui.inference.base import InferenceError
from haf_tui.inference.model_catalog import discover_models, download_model
from tests.conftest import REPO_ROOT


def test_the_embedded_model_comes_first_and_bad_files_say_why(tmp_path: Path) -> None:
    (tmp_path / "broken.gguf").write_bytes(b"not a gguf at all")
    entries = discover_models([tmp_path])
    assert entries[0].embedded and entries[0].info is not None
    assert entries[0].info.architecture == "llama" and entries[0].info.has_chat_template
    broken = entries[-1]
    assert broken.path.name == "broken.gguf" and broken.info is None and broken.error


def test_offline_download_fails_at_once_with_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InferenceError, match=r"offline.*copy it into"):
        download_model("owner/repo", "model.gguf", tmp_path)  # (offline: no retries by design)


def test_an_unreachable_hub_fails_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    with pytest.raises(InferenceError, match="cannot be reached"):
        download_model("owner/repo", "model.gguf", tmp_path, endpoint="http://127.0.0.1:9")


def test_bad_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InferenceError, match="owner/name"):
        download_model("repo", "model.gguf", tmp_path)
    with pytest.raises(InferenceError, match=r"\.gguf"):
        download_model("owner/repo", "model.bin", tmp_path)


SERVER_SCRIPT = textwrap.dedent(
    """
    import hashlib, http.server, json, sys, threading
    from pathlib import Path
    from haf_tui.inference.base import InferenceError
    from haf_tui.inference.model_catalog import download_model

    DATA = bytes(range(256)) * 2000
    SHA = hashlib.sha256(DATA).hexdigest()

    class Hub(http.server.BaseHTTPRequestHandler):
        def _head(self):
            if not self.path.endswith("/resolve/main/tiny.gguf"):
                self.send_response(404)
                self.send_header("X-Error-Code", "EntryNotFound")
                self.end_headers()
                return False
            self.send_response(200)
            self.send_header("Content-Length", str(len(DATA)))
            self.send_header("ETag", '"' + SHA + '"')
            self.send_header("X-Repo-Commit", "a" * 40)
            self.end_headers()
            return True
        def do_HEAD(self):
            self._head()
        def do_GET(self):
            if self._head():
                self.wfile.write(DATA)
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_port}"
    seen = []
    path = download_model("me/repo", "tiny.gguf", Path(sys.argv[1]), endpoint=endpoint,
                          progress=lambda done, total: seen.append([done, total]))
    try:
        download_model("me/repo", "absent.gguf", Path(sys.argv[1]), endpoint=endpoint)
        missing = ""
    except InferenceError as exc:
        missing = str(exc)
    print(json.dumps({"path": str(path), "size": path.stat().st_size, "seen": seen,
                      "missing": missing, "expected": len(DATA)}))
    """
)


def test_a_download_reports_progress_and_lands_in_the_folder(tmp_path: Path) -> None:
    import json

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT"}
    }
    env["HF_HOME"] = str(tmp_path / "hf-home")
    result = subprocess.run(
        [sys.executable, "-c", SERVER_SCRIPT, str(tmp_path / "models")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["path"] == str(tmp_path / "models" / "tiny.gguf")
    assert report["size"] == report["expected"]
    assert report["seen"][-1] == [report["expected"], report["expected"]]
    assert "has no file absent.gguf" in report["missing"]
