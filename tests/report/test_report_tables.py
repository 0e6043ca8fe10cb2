"""The index page's tables built on the one table model: a ranked board and the overview rendered by the model's
HTML renderer match hand-written HTML (the rows' data-* attributes the page script and the browser tests read,
the cells' classes, the test as the mark's title, the file's provenance link), and a hostile system name comes back
as the same text from the cell and from the row's attribute, escaped in both; likewise a data set page's list of
significance tests."""

from __future__ import annotations

import html
from html.parser import HTMLParser

from memini_bench.core.table import Cell, Column, Table, html_text
from memini_bench.report import tables

HOSTILE = '<!--<script>"x\'&amp;'


def _row(name: str, mark: str, label: str, title: str, r5: str, r10: str, file: str, source: int) -> dict:
    return {"name": name, "mark": mark, "mark_label": label, "test": {"p": 0.01} if title else None,
            "test_title": title, "cells": {"R@5": r5, "R@10": r10}, "questions": 40, "split": "held split",
            "file": file, "source": source, "note": ""}


BOARD = {"key": "locomo-x-held-minilm", "group": "locomo-x-held", "slug": "locomo-x-held-minilm",
         "title": "LoCoMo x", "split_label": "held split", "embedder": "minilm", "embedder_label": "MiniLM",
         "tested": 1, "behind": 1, "untested": [], "questions": 40, "primary": "R@10", "columns": ["R@5", "R@10"],
         "leader": "reference",
         "leader_value": "80.0", "tied": [HOSTILE],
         "rows": [_row("reference", "best", "best", "", "70.0", "80.0", "a.json", 0),
                  _row(HOSTILE, "behind", "significantly behind", "R@10: -5.0 pp against <b>", "65.0", "75.0",
                       "b&c.json", 1)],
         "apart": [], "claims": []}

RANKED = (
    '<table class="board ranked-board">\n'
    '<thead><tr><th class="num">#</th><th>system</th><th>against the leader</th><th class="num">R@5</th>'
    '<th class="num ranked">R@10</th><th class="num">questions</th><th>split</th><th>file</th></tr></thead>\n'
    '<tbody>\n'
    '<tr data-system="reference" data-mark="best" data-questions="40"><td class="num">1</td><td>reference</td>'
    '<td class="mark mark-best">best</td><td class="num">70.0</td><td class="num ranked">80.0</td>'
    '<td class="num">40</td><td>held split</td><td><a class="src" href="provenance.html#src-0">a.json</a></td>'
    '</tr>\n'
    '<tr data-system="&lt;!--&lt;script&gt;&quot;x&#x27;&amp;amp;" data-mark="behind" data-questions="40">'
    '<td class="num">2</td><td>&lt;!--&lt;script&gt;&quot;x&#x27;&amp;amp;</td>'
    '<td class="mark mark-behind" title="R@10: -5.0 pp against &lt;b&gt;">significantly behind</td>'
    '<td class="num">65.0</td><td class="num ranked">75.0</td><td class="num">40</td><td>held split</td>'
    '<td><a class="src" href="provenance.html#src-1">b&amp;c.json</a></td></tr>\n'
    '</tbody>\n'
    '</table>\n')

OVERVIEW = (
    '<table class="board overview" id="overview">\n'
    '<thead><tr><th>board</th><th>split</th><th class="embedder">embedder</th><th class="num">questions</th>'
    '<th>primary</th><th>leader</th><th>not significantly different from the leader</th>'
    '<th class="num">tested against the leader</th><th class="num">behind</th><th class="num untested">untested</th>'
    '<th class="num">smoke tests / apart</th></tr></thead>\n'
    '<tbody>\n'
    '<tr data-board="locomo-x-held-minilm" data-group="locomo-x-held" data-embedder="minilm">'
    '<td><a href="#board-locomo-x-held-minilm">LoCoMo x</a></td><td>held split</td><td class="embedder">MiniLM</td>'
    '<td class="num">40</td><td>R@10</td><td><strong>reference 80.0</strong></td>'
    '<td>&lt;!--&lt;script&gt;&quot;x&#x27;&amp;amp;</td><td class="num">1</td><td class="num">1</td>'
    '<td class="num untested">0</td><td class="num">0</td></tr>\n'
    '</tbody>\n'
    '</table>\n')


def test_overview_says_why_no_row_is_tied():
    """Never a bare "-": no other ranked row, none of the tested, or no row tested (untested apart)."""
    base = {**BOARD, "tied": []}
    assert tables._tied(base) == "none of 1 tested"
    assert tables._tied({**base, "tested": 0, "untested": [HOSTILE]}) == "no row tested"
    assert tables._tied({**base, "rows": base["rows"][:1]}) == "no other ranked row"


def test_ranked_board_matches_hand_written_html():
    assert html_text(tables.ranked(BOARD)) == RANKED


def test_overview_matches_hand_written_html():
    assert html_text(tables.overview([BOARD])) == OVERVIEW


class _Rows(HTMLParser):
    """Each body row's attributes and cell texts, as a browser reads them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows, self.cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append((dict(attrs), []))
        elif tag == "td":
            self.cell = ""

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data

    def handle_endtag(self, tag):
        if tag == "td":
            self.rows[-1][1].append(self.cell)
            self.cell = None


def test_hostile_name_is_the_same_text_in_the_cell_and_the_attribute():
    parser = _Rows()
    parser.feed(html_text(tables.ranked(BOARD)))
    attrs, cells = parser.rows[-1]
    assert attrs["data-system"] == HOSTILE and cells[1] == HOSTILE
    assert parser.rows[-1][0]["data-mark"] == "behind" and cells[-1] == "b&c.json"


def test_model_html_options_leave_a_plain_table_as_it_was():
    """Without the HTML options a cell is classed by its column's alignment; with them, the column's or the
    cell's class, a title and a link, all escaped."""
    cols = (Column("a", "a", "left"), Column("b", "b<", html_class="", header_attrs=(("data-col", "b\""),)),
            Column("c", "c", html_class="num x"))
    row = (Cell(1, "1"), Cell(2, "2", title='t"', href='h"<', link_class="k"), Cell(3, "3", html_class="y"))
    got = html_text(Table(cols, (row,), row_attrs=({"data-q": '"'},)))
    assert got == ('<table>\n<thead><tr><th class="left">a</th><th data-col="b&quot;">b&lt;</th>'
                   '<th class="num x">c</th></tr></thead>\n'
                   '<tbody>\n<tr data-q="&quot;"><td class="left">1</td>'
                   '<td title="t&quot;"><a class="k" href="h&quot;&lt;">2</a></td><td class="y">3</td></tr>\n'
                   '</tbody>\n</table>\n')


def test_significance_list_rows_are_classed_by_outcome():
    """A data set page's list of one metric's tests: the difference and interval in signed points, the Holm p with
    "(significant)" where it is, each row classed win, loss or ns."""
    def test(b, delta, low, high, p, significant):
        return {"system_b": b, "delta": delta, "ci_low": low, "ci_high": high, "p_adjusted": p,
                "significant": significant, "test": "mcnemar", "questions": 40}

    tests_ = {"metric": "R@10", "centre": "ref<", "rows": [test(HOSTILE, 0.05, 0.01, 0.09, 0.012, True),
                                                           test("b", -0.1, -0.2, -0.03, 0.004, True),
                                                           test("c", 0.01, -0.02, 0.04, 0.5, False)]}
    assert html_text(tables.sig_list(tests_)) == (
        '<table class="board siglist">\n'
        '<thead><tr><th>against</th><th class="num">ref&lt; minus it (pp)</th><th class="num">95% interval</th>'
        '<th class="num">Holm p</th><th>test</th><th class="num">questions</th></tr></thead>\n'
        '<tbody>\n'
        '<tr class="win"><td>&lt;!--&lt;script&gt;&quot;x&#x27;&amp;amp;</td><td class="num">+5.0</td>'
        '<td class="num">[+1.0, +9.0]</td><td class="num">0.012 (significant)</td><td>mcnemar</td>'
        '<td class="num">40</td></tr>\n'
        '<tr class="loss"><td>b</td><td class="num">-10.0</td><td class="num">[-20.0, -3.0]</td>'
        '<td class="num">0.004 (significant)</td><td>mcnemar</td><td class="num">40</td></tr>\n'
        '<tr class="ns"><td>c</td><td class="num">+1.0</td><td class="num">[-2.0, +4.0]</td>'
        '<td class="num">0.5</td><td>mcnemar</td><td class="num">40</td></tr>\n'
        '</tbody>\n'
        '</table>\n')


def _test(delta: float, significant: bool) -> dict:
    return {"delta": delta, "significant": significant, "test": "mcnemar", "questions": 40, "ci_low": delta - 0.05,
            "ci_high": delta + 0.05, "p_adjusted": 0.0123 if significant else 0.5}


def test_significance_grid_matches_the_hand_written_grid():
    """A systems x systems grid (``site.sig_matrix``'s shape): row labels as ``<th>``, each tested cell the row
    minus the column in signed points with its Holm p on a small second line, classed by outcome and titled with
    its test; the diagonal and untested cells empty, classed ``na``; a hostile name escaped as a header and a
    row label."""
    matrix = {"metric": "R@5", "systems": ["a", HOSTILE],
              "cells": [[None, _test(0.1, True)], [_test(-0.02, False), None]]}
    h = html.escape(HOSTILE)
    assert html_text(tables.sig_grid(matrix)) == (
        '<table class="sig">\n<caption>R@5</caption>\n'
        f'<thead><tr><th></th><th>a</th><th>{h}</th></tr></thead>\n<tbody>\n'
        '<tr><th>a</th><td class="na"></td>'
        '<td class="win" title="mcnemar, 40 questions, 95% CI [5.0, 15.0]">+10.0<br><small>p=0.012</small></td></tr>\n'
        f'<tr><th>{h}</th><td class="ns" title="mcnemar, 40 questions, 95% CI [-7.0, 3.0]">-2.0'
        '<br><small>p=0.5</small></td><td class="na"></td></tr>\n'
        '</tbody>\n</table>\n')
