"""A PNG of a built page (the README's leaderboard picture): Playwright driving Debian's chromium, headless.

Chromium at ``/usr/bin/chromium`` (``.ci/install-browser``) and the ``playwright`` package (the report extra) are
needed; either missing is a BenchError saying how to install it. Playwright's own browser download is not used.
"""

from __future__ import annotations

from pathlib import Path

from memini_bench.errors import BenchError

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]


def screenshot(page: Path, png: Path, width: int = 1300, height: int = 760) -> None:
    if not Path(CHROMIUM).exists():
        raise BenchError(f"-screenshot: {CHROMIUM} is missing; run .ci/install-browser (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise BenchError("-screenshot: playwright is not installed; pip install -e '.[report]'") from None
    png.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            tab = browser.new_page(viewport={"width": width, "height": height})
            errors: list[str] = []
            tab.on("pageerror", lambda e: errors.append(str(e)))
            tab.goto(page.resolve().as_uri())
            tab.wait_for_load_state("load")
            if errors:
                raise BenchError(f"-screenshot: {page} raised {errors[0]}")
            tab.screenshot(path=str(png))
        finally:
            browser.close()
