"""Hostile names in the report: system and category names that try to end the inline JSON (``</script``), open an
HTML comment (``<!--``), break out of an attribute or inject SVG are shown as text in Chromium, on every page, with
no script run; and a results file with numbers the report cannot show is one line naming it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import needs_report

needs_report()

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT / "results" / "locomo.json"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
HOSTILE = ["<!--<script>", "</script><script>window.pwned=1</script>", '"><img src=x onerror="window.pwned=2">',
           "a'b\"c&amp;d", "--><script>window.pwned=4</script><!--", "<svg onload=window.pwned=3>"]
CATEGORY = "<!--cat--><script>window.pwned=5</script>"


def _rename(node, names: dict[str, str]):
    if isinstance(node, dict):
        return {names.get(k, k): _rename(v, names) for k, v in node.items()}
    if isinstance(node, list):
        return [_rename(v, names) for v in node]
    return names.get(node, node) if isinstance(node, str) else node


def _report(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memini_bench", "report", *args], capture_output=True, text=True,
                          cwd=ROOT)


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("hostile")
    doc = json.loads(LOCOMO.read_text())
    systems = list(dict.fromkeys(r["system"] for r in doc["results"]))
    label = next(iter(doc["config"]["category_labels"].values()))
    names = dict(zip(systems, HOSTILE, strict=False)) | {label: CATEGORY}
    path = tmp / "hostile.json"
    path.write_text(json.dumps(_rename(doc, names)))
    done = _report(str(path), "-o", str(tmp / "site"))
    assert done.returncode == 0, done.stderr
    return {"dir": tmp / "site", "names": [names[s] for s in systems if s in names]}


#: Playwright's bound on launching and on each wait (its default is 30 s): generous, since a page of the site
#: loads in well under a second unless the machine is busy; the bound is a hang guard, never the thing tested
WAIT_MS = 600_000


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no browser: {CHROMIUM} is missing (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the report extra)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, timeout=WAIT_MS)
        yield b
        b.close()


def test_hostile_names_are_text_on_every_page(hostile_site, browser):
    ctx = browser.new_context()
    ctx.set_default_timeout(WAIT_MS)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("dialog", lambda d: errors.append(f"dialog {d.message}"))
    try:
        page.goto((hostile_site["dir"] / "runs.html").as_uri())  # every run, one row each
        page.wait_for_load_state("load")
        shown = page.eval_on_selector_all("#board tbody tr", "trs => trs.map(t => t.children[1].textContent)")
        attrs = page.eval_on_selector_all("#board tbody tr", "trs => trs.map(t => t.dataset.system)")
        assert set(hostile_site["names"]) <= set(attrs), attrs
        assert set(hostile_site["names"]) <= set(shown), shown
        for name in hostile_site["dir"].glob("*.html"):
            page.goto(name.as_uri())
            page.wait_for_load_state("load")
            assert page.evaluate("window.pwned === undefined"), name
            assert page.eval_on_selector_all("img", "xs => xs.length") == 0, name
            text = page.evaluate("document.body.textContent")
            if name.name.startswith("ds-"):
                for hostile in hostile_site["names"]:  # matrix headers and the SVG labels
                    assert hostile in text, (name, hostile)
                assert page.eval_on_selector_all("svg", "xs => xs.length") >= 2  # the figures are there
            injected = "Array.from(document.scripts).filter(s => s.text.trim().startsWith('window.pwned')).length"
            assert page.evaluate(injected) == 0, name  # no name became a script element (as data it is fine)
        assert errors == []
    finally:
        ctx.close()


@pytest.mark.parametrize(("field", "value", "why"), [
    ("recall_any@K", 7.5, "recall_any@5 7.5 is not a rate in [0, 1]"),
    ("latency_p50", -5, "latency_p50 -5 is not a non-negative number"),
    ("questions", -3, "questions -3 is not a non-negative integer"),
    ("k", -5, "k -5 is not a positive integer"),
    ("k", 0, "k 0 is not a positive integer"),
    ("mrr", "0.5", "mrr '0.5' is not a rate in [0, 1]"),
    ("latency_p50", 10**9, "is above latency_p95"),
    ("per_category", {"1": 1.5}, "category '1': recall_any@5 1.5 is not a rate"),
    ("questions", 1, "its categories count"),
])
def test_a_file_with_numbers_the_report_cannot_show_is_one_line(tmp_path, field, value, why):
    doc = json.loads(LOCOMO.read_text())
    row = doc["results"][0]
    k = row["k"]
    metric = {"recall_any@K": f"recall_any@{k}", "mrr": "mrr", "latency_p50": "latency_p50"}
    if field in metric:  # schema 3: a metric sits in the row's {metric: value} mapping
        row["scores"][metric[field]] = value
    elif field == "per_category":
        row["categories"] = {cat: {f"recall_any@{k}": rate} for cat, rate in value.items()}
    else:
        row[field] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    done = _report(str(path), "-format", "md")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert str(path) in done.stderr and why in done.stderr, done.stderr


def test_question_counts_must_agree_over_a_systems_k_rows(tmp_path):
    doc = json.loads(LOCOMO.read_text())
    first = doc["results"][0]
    other = next(r for r in doc["results"][1:] if r["system"] == first["system"])
    other["questions"] += 1
    other["per_category_questions"] = {}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    done = _report(str(path), "-format", "md")
    assert done.returncode == 2 and "where its other K rows have" in done.stderr, done.stderr
