"""The demo's ``report.html`` in headless Chromium: the item browser renders, no JavaScript
error."""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image


def console_errors(stderr: str) -> list[str]:
    """Chromium's ``--enable-logging=stderr`` lines of the page's console (``Uncaught ...``,
    console.error)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def test_demo_report_renders_its_item_browser(demo_dir: Path, chromium, tmp_path: Path):
    page = demo_dir / "report.html"
    assert page.is_file(), "the demo's side-by-side report writes report.html"
    dom = chromium(page.as_uri(), "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert console_errors(dom.stderr) == []
    html = dom.stdout
    assert 'data-ready="1"' in html  # the script ran to its end
    assert "data-js-errors" not in re.search(r"<html[^>]*>", html)[0]  # the page's error listener
    count = re.search(r'<p id="item-count"([^>]*)>', html)[1]
    attributes = dict(re.findall(r'data-([a-z]+)="(\d+)"', count))
    # every run of the demo (tiny models x frame orders, fine-tuned models) x 36 test items;
    # the first page of 50, all thumbnailed
    runs = sum(1 for run in (demo_dir / "runs").iterdir() if (run / "results.json").is_file())
    assert runs >= 6
    total = str(runs * 36)
    assert attributes == {"total": total, "matching": total, "rendered": "50", "thumbnailed": "50"}
    assert html.count('class="item ') == 50
    assert html.count('<img src="data:image/jpeg') == 50 * 8  # 8 frames a strip
    assert "runs disagree" in html.split('id="items"')[1][:3000]  # disagreements first

    shot = tmp_path / "report.png"
    run = chromium(
        page.as_uri(), f"--screenshot={shot}", "--window-size=1280,1600", "--hide-scrollbars"
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert console_errors(run.stderr) == []
    with Image.open(shot) as image:
        assert image.size == (1280, 1600)
        assert len(image.convert("L").getcolors(1 << 16)) > 50  # not a blank page


def test_run_report_renders_in_chromium(demo_dir: Path, chromium):
    page = demo_dir / "runs" / "xclip" / "report.html"
    dom = chromium(page.as_uri(), "--dump-dom")
    assert dom.returncode == 0 and console_errors(dom.stderr) == []
    count = re.search(r'<p id="item-count"([^>]*)>', dom.stdout)[1]
    assert 'data-total="36"' in count and 'data-rendered="36"' in count
