"""Renders every docs/results/*/report.md to report.html and takes a screenshot of
the top of each page (screenshot.png beside it) in the distribution's headless
Chromium, for the README's gallery.

    python3 tools/report_screenshots.py [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from coflowkit.experiments import writer

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    folders = sorted(p.parent for p in (ROOT / "docs" / "results").glob("*/report.md"))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 760})
        for folder in folders:
            writer.render_html(str(folder))
            page.goto((folder / "report.html").as_uri())
            page.wait_for_load_state("load")
            shot = folder / "screenshot.png"
            page.screenshot(path=str(shot))
            print(f"wrote {shot.relative_to(ROOT)}")
        browser.close()


if __name__ == "__main__":
    main()
