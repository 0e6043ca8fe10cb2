"""The report's corrections board (``corrections.html``, ``report.corrections``): a fresh ``-suite corrections`` run
of a hand-written history shows the hand-computed scores (recent-k brings a forgotten fact back, memini-keyword
does not), the floors are labelled rows listed last and never marked best, the committed corrections files show
every score of their JSON in a real browser, and a damaged corrections block is one line, exit 2, nothing
written; a hypothesis fuzz holds mutated corrections blocks to that."""

from __future__ import annotations

import copy
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from cli_run import run_cli
from fuzz_strategies import mutated
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memini_bench.errors import BenchError
from memini_bench.report import corrections, site
from memini_bench.report.collect import collect
from tests.conftest import needs_report

needs_report()

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
COMMITTED = sorted(p for p in RESULTS.glob("*.json") if "corrections" in json.loads(p.read_text()))
CHROMIUM = "/usr/bin/chromium"

# w1 city Lisbon, w2 car Volvo, w3 city Osaka (a change: supersedes w1), then the car forgotten. Hand-computed at
# K=1: recent-k returns the newest write of the group: w3 for the current question (gold w3, stale w1), and it
# keeps w2 after the forget (no forget hook), so at any depth the forgotten write comes back; memini-keyword's
# update drops w1 and its forget drops w2. The as-of question (March 1st..., value Lisbon): gold w1.
HISTORY = {"name": "hand", "histories": [{"group": "g", "events": [
    {"id": "w1", "time": "2024-01-01T00:00:00Z", "fact": "city", "value": "Lisbon", "text": "I live in Lisbon."},
    {"id": "w2", "time": "2024-02-01T00:00:00Z", "fact": "car", "value": "Volvo", "text": "I drive a Volvo."},
    {"id": "w3", "time": "2024-03-01T00:00:00Z", "fact": "city", "value": "Osaka", "text": "I moved to Osaka."},
    {"forget": "car", "time": "2024-04-01T00:00:00Z"}],
    "questions": [
        {"id": "q-city", "kind": "current", "fact": "city", "query": "Which city do I live in?"},
        {"id": "q-car", "kind": "forgotten", "fact": "car", "query": "What car do I drive?"},
        {"id": "q-jan", "kind": "as-of", "fact": "city", "query": "Which city did I live in?",
         "at": "2024-01-15T00:00:00Z"}]}]}


class _Tables(HTMLParser):
    """Every ``<table>`` of a page as (caption, rows of cell texts, row attributes, the file of its section)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict] = []
        self._file = ""
        self._cell: list[str] | None = None
        self._caption = False

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            self._file = dict(attrs).get("data-file", "")
        elif tag == "table":
            self.tables.append({"caption": "", "rows": [], "attrs": [], "file": self._file})
        elif tag == "caption":
            self._caption = True
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
            self.tables[-1]["attrs"].append(dict(attrs))
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "strong" and self._cell is not None:
            self._cell.append("**")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1]["rows"][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "caption":
            self._caption = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        elif self._caption:
            self.tables[-1]["caption"] += data


def _tables(path: Path, file: str | None = None) -> dict[str, dict]:
    """The page's tables by caption (those of ``file``'s section when given)."""
    parser = _Tables()
    parser.feed(path.read_text())
    return {t["caption"]: t for t in parser.tables if file is None or t["file"] == file}


@pytest.fixture(scope="module")
def hand_site(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("corrections")
    data = tmp / "hand.json"
    data.write_text(json.dumps(HISTORY))
    code = _cli(["run", "-suite", "corrections", "-data", str(data), "-systems", "recent-k,keyword,random",
                 "-embedder", "hash", "-k", "1", "-out", str(tmp / "run")])
    assert code == 0
    (results,) = (tmp / "run").glob("*.json")
    assert _cli(["report", str(results), "-o", str(tmp / "site")]) == 0
    return tmp / "site"


def _cli(args: list[str]) -> int:
    import contextlib
    import io

    from memini_bench.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(args)
        except SystemExit as exc:
            return exc.code if isinstance(exc.code, int) else 1
    return 0


def _by_system(table: dict) -> dict[str, list[str]]:
    header, *rows = table["rows"]
    return {row[0]: dict(zip(header, row, strict=True)) for row in rows}


def test_the_board_shows_the_hand_computed_scores_with_the_floors_last(hand_site):
    tables = _tables(hand_site / "corrections.html")
    assert {"current: K=1", "forgotten: any K", "as-of: K=1"} <= set(tables)
    current = _by_system(tables["current: K=1"])
    assert list(current) == ["memini-keyword", "recent-k", "random"]  # the floors last
    assert current["recent-k"]["role"] == "floor" and current["random"]["role"] == "floor"
    assert current["memini-keyword"]["role"] == ""
    assert current["recent-k"]["current recall_any@1"] == "100.0%"  # w3, the newest write, is the current value
    assert current["memini-keyword"]["updates native"] == "1/1" and current["recent-k"]["updates native"] == "0/1"
    forgotten = _by_system(tables["forgotten: any K"])
    assert forgotten["recent-k"]["forgotten resurrection"] == "100.0%"  # never forgets: w2 comes back
    assert forgotten["memini-keyword"]["forgotten resurrection"] == "**0.0%"  # best: in <strong>
    assert forgotten["memini-keyword"]["forgets honoured"] == "1/1"
    assert forgotten["recent-k"]["forgets honoured"] == "0/1"
    assert "**" not in "".join(forgotten["recent-k"].values())  # a floor is never marked best
    index = (hand_site / "index.html").read_text()
    assert 'href="corrections.html"' in index


def test_the_tests_table_lists_each_system_against_the_reference(hand_site):
    (results,) = (hand_site.parent / "run").glob("*.json")
    block = json.loads(results.read_text())["corrections"]
    assert block["reference"] == "recent-k"  # no reference or hybrid in the run: the first system
    caption, sig = next((c, t) for c, t in _tables(hand_site / "corrections.html").items() if "paired" in c)
    assert caption.startswith("recent-k against each system")
    header, *rows = sig["rows"]
    rows = [r for r in rows if len(r) == len(header)]  # the footnote is one cell
    assert header[:3] == ["system", "score", "N"]
    assert [(r[0], r[1]) for r in rows] == [(t["system_b"], t["metric"]) for t in block["significance"]]
    assert {r[0] for r in rows} == {"memini-keyword", "random"}
    # one question per kind: no difference can be significant, so no p value is bold
    assert not any(r[-1].startswith("**") for r in rows)


@pytest.mark.skipif(not COMMITTED, reason="no committed -suite corrections results file")
def test_every_committed_score_is_on_the_board(tmp_path):
    site.build(collect([str(p) for p in COMMITTED]), tmp_path)
    for path in COMMITTED:
        tables = _tables(tmp_path / "corrections.html", path.name)
        block = json.loads(path.read_text())["corrections"]
        for k, systems in block["scores"].items():
            for system, scores in systems.items():
                for s in scores:
                    caption = f"{s['kind']}: " + ("any K" if s["kind"] == "forgotten" else f"K={k}")
                    rows = [r for r in tables[caption]["rows"] if r[0] == system]
                    want = f"{s['mean'] * 100:.1f}%"
                    assert any(want in cell for r in rows for cell in r), (path.name, system, s)


def _browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no browser: {CHROMIUM} is missing (run .ci/install-browser: apt-get install chromium)")
    return pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the report extra)")


def test_the_board_in_a_real_browser(hand_site):
    sync_api = _browser()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"],
                                    timeout=600_000)
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.set_default_timeout(600_000)
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((hand_site / "index.html").resolve().as_uri())
        page.click("nav >> text=corrections")
        page.wait_for_load_state("load")
        assert page.url.endswith("/corrections.html")
        floors = page.eval_on_selector_all("table.corrections tr.floor td:first-child",
                                           "t => t.map(x => x.textContent)")
        assert set(floors) == {"recent-k", "random"}
        assert page.is_visible("text=forgotten: any K")
        assert errors == []
        browser.close()


def _damage(doc: dict, change) -> dict:
    doc = copy.deepcopy(doc)
    change(doc["corrections"])
    return doc


@pytest.mark.parametrize(("change", "needle"), [
    (lambda c: c["scores"]["1"]["recent-k"][0].update(mean=1.5), "mean: 1.5 is not a rate in [0, 1]"),
    (lambda c: c["scores"]["1"]["recent-k"][0].update(kind="past"), "expected {kind"),
    (lambda c: c["scores"].update({"x": {}}), "expected a positive K"),
    (lambda c: c["writes"]["recent-k"].update(forgets_honoured=-1), "forgets_honoured: -1"),
    (lambda c: c["significance"][0].update(p_adjusted=None), "p_adjusted: None"),
    (lambda c: c.update(scores=[]), "expected an object with scores"),
])
def test_a_damaged_corrections_block_is_one_line_exit_2_nothing_written(hand_site, tmp_path, capsys, change, needle):
    (results,) = (hand_site.parent / "run").glob("*.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_damage(json.loads(results.read_text()), change)))
    code, _, err = run_cli(["report", str(bad), "-o", str(tmp_path / "site")], capsys)
    assert code == 2 and needle in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert str(bad) in err
    assert not (tmp_path / "site").exists()


@settings(max_examples=60, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_fuzz_a_mutated_corrections_block_builds_or_is_one_line(hand_site, tmp_path_factory, data):
    """A results file whose corrections block has a few mutations (``fuzz_strategies.mutated``): the site builds
    with its corrections page, or the report stops in one BenchError line naming the file and writes nothing."""
    (results,) = (hand_site.parent / "run").glob("*.json")
    doc = json.loads(results.read_text())
    doc["corrections"] = data.draw(mutated(st.just(doc["corrections"])))
    tmp = tmp_path_factory.mktemp("fuzz")
    path = tmp / "mutated.json"
    path.write_text(json.dumps(doc))
    try:
        inputs = collect([str(path)])
    except BenchError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
        return
    site.build(inputs, tmp / "site")
    assert (tmp / "site" / "corrections.html").is_file() or not corrections.page(inputs.sources)
