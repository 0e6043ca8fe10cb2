"""A PNG of a built page (the README's leaderboard picture): Playwright driving Debian's chromium, headless.

Chromium at ``/usr/bin/chromium`` (``.ci/install-browser``) and the ``playwright`` package (the report extra) are
needed; either missing is a BenchError saying how to install it. Playwright's own browser download is not used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memini_bench.core.console import run_command
from memini_bench.core.settings import command, setting
from memini_bench.errors import BenchError

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]


def screenshot(page: Path, png: Path, width: int = 1300, height: int = 760, *, element: str = "",
               wait_for: str = "") -> None:
    """A PNG of ``page`` (its first ``height`` pixels, or only the ``element`` CSS selector's box), taken once
    ``wait_for`` (a selector) is on the page; a page error is a BenchError."""
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
            if wait_for:
                tab.wait_for_selector(wait_for)
            if errors:
                raise BenchError(f"-screenshot: {page} raised {errors[0]}")
            if element:
                tab.locator(element).first.screenshot(path=str(png))
            else:
                tab.screenshot(path=str(png))
        finally:
            browser.close()


#: ``screenshots``: (file under docs/, page, element, selector to wait for); the board is LoCoMo turn's held split
#: (its section's id is ``board-<set>-<data>-<split>-<embedder>``), the figures LoCoMo turn's full MiniLM board's.
SHOTS = (("report-leaderboard.png", "index.html", "", "#overview[data-ready='1']"),
         ("report-board.png", "index.html", "#board-locomo-locomo10-held-minilm", "#board-locomo-locomo10-held-minilm"),
         ("report-heatmap.png", "ds-locomo.html", "#fig-locomo-locomo10-full-minilm figure.heatmap", ""),
         ("report-pareto.png", "ds-locomo.html", "#fig-locomo-locomo10-full-minilm figure.pareto", ""),
         ("report-claims.png", "claims.html", "", "table#claims"),
         ("report-receipts.png", "receipts-locomo-held.html", "", ".receipt"))


def screenshots(site: Path, docs: Path) -> list[Path]:
    """The README's and docs/report.md's pictures (``SHOTS``) from a built site; a missing page is a BenchError."""
    out = []
    for name, page, element, wait_for in SHOTS:
        if not (site / page).is_file():
            raise BenchError(f"{site / page}: missing; build the site from the committed results first "
                             "(memini-bench report results -o SITE)")
        screenshot(site / page, docs / name, height=900, element=element, wait_for=wait_for)
        out.append(docs / name)
    return out


@dataclass(frozen=True)
class ShotOptions:
    """The flags of ``cmd/report_screenshots.py`` (``make screenshots``)."""

    site: str = setting("site", "build/report", "the folder of a site built from the committed results")
    dir: str = setting("dir", "runs/screenshots", "where the pictures go (make screenshots: docs)")


@command(ShotOptions, name="report-screenshots")
def main_command(args: ShotOptions) -> int:
    """The report's pictures (``SHOTS``) from a built site."""
    for path in screenshots(Path(args.site), Path(args.dir)):
        print(f"wrote {path}")
    return 0


def main(argv: list[str] | None = None) -> int | None:
    """The entry point, with the CLI's one-line errors (exit 2 for bad input)."""
    return run_command(main_command, argv, "memini-bench")
