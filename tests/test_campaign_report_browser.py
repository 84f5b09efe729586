"""The campaign report's HTML in a real headless browser (Chromium from the system's packages):
it renders offline into a non-blank screenshot, and the DOM the browser built holds every
table and inline SVG figure. Skipped, saying so, where Chromium is not installed (``.ci/run``
installs it where it can)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from haf_tui.campaign.report import write_campaign_report
from haf_tui.store import open_store
from tests.support.campaign_store import campaign_db

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (apt-get install chromium): the HTML browser check skips",
)
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def _chromium(profile: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    command = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_chromium_renders_the_report_offline(tmp_path: Path) -> None:
    from PIL import Image

    db = tmp_path / "runs.duckdb"
    cells = campaign_db(db, n_instances=12)
    out = tmp_path / "report"
    with open_store(db, read_only=True) as store:
        write_campaign_report(store, "browser check", cells, ["html", "markdown"], out)
    page = out / "report.html"
    text = page.read_text(encoding="utf-8")
    assert "http://" not in text and "https://" not in text
    assert not re.search(r"\ssrc=", text)
    url = page.resolve().as_uri()
    shot = tmp_path / "shot.png"
    done = _chromium(tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,2000", url)
    assert done.returncode == 0, done.stderr[-2000:]
    with Image.open(shot) as image:
        assert image.format == "PNG" and image.size == (1280, 2000)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50  # (text, rules and bars: not blank)
    dom = _chromium(tmp_path / "profile-dom", "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    markdown = (out / "report.md").read_text(encoding="utf-8")
    headings = re.findall(
        r"^## (.+)$", markdown, flags=re.MULTILINE
    )  # (the cells, tables, figures)
    figures = list((out / "figures").glob("*.svg"))
    assert dom.stdout.count("<table") == len(headings) - len(figures)
    assert dom.stdout.count("<svg") == len(figures) >= 3
    assert "Table 1 — HAF metrics per model × dataset" in dom.stdout
