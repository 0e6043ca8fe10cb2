"""The report's tables as ``Table``s of the one table model (``memini_bench.core.table``), rendered by its HTML
renderer: on the index, the board overview, each board's ranked rows, its rows apart, its published claims and the
claims no board here matches (from ``site.boards_data``'s dicts); on a data set page, the list of one metric's
tests (``site.sig_list``); the all-runs table's header (``runs.html``). The page script and the tests read the
rows' ``data-*`` attributes (``data-board``, ``data-system``, ``data-mark``, ``data-questions``, ``data-metric``),
the headers' ``data-col`` and the cells' classes (``num``, ``ranked``, ``mark mark-<mark>``, ``url``). Every name
is escaped by the renderer, in text and in attributes.
"""

from __future__ import annotations

from dataclasses import replace

from memini_bench.core.table import Cell, Column, Table, fmt_interval, fmt_num, fmt_points, html_text


def _col(key: str, header: str = "", num: bool = False, extra: str = "") -> Column:
    """A column: ``num`` (right-aligned, class ``num``) or text (left, no class); ``extra`` classes appended."""
    return Column(key, header or key, "right" if num else "left",
                  html_class=" ".join(c for c in ("num" if num else "", extra) if c))


def _text(value: object) -> Cell:
    return Cell(value, str(value))


def _file(row: dict) -> Cell:
    return Cell(row["file"], row["file"], href=f"provenance.html#src-{row['source']}", link_class="src")


def overview(boards: list[dict]) -> Table:
    """One row per board: its title (a link to its section), split, questions, primary metric, leader, the rows
    not significantly different from it, and how many rows are ranked and apart."""
    columns = (_col("board"), _col("split"), _col("questions", num=True), _col("primary"), _col("leader"),
               _col("tied", "not significantly different from the leader"), _col("ranked", num=True),
               _col("apart", "smoke tests / apart", num=True))
    rows = tuple((Cell(b["title"], b["title"], href=f"#board-{b['slug']}"), _text(b["split_label"]),
                  _text(b["questions"]), _text(b["primary"]),
                  Cell(b["leader"], f"{b['leader']} {b['leader_value']}", strong=True) if b["leader"]
                  else Cell(None, "none ranked"),
                  Cell(b["tied"], ", ".join(b["tied"]) or "-"), _text(len(b["rows"])), _text(len(b["apart"])))
                 for b in boards)
    return Table(columns, rows, html_class="board overview", html_id="overview",
                 row_attrs=tuple({"data-board": b["key"]} for b in boards))


def _metric_columns(board: dict, rank: bool) -> tuple[Column, ...]:
    return tuple(_col(c, num=True, extra="ranked" if rank and c == board["primary"] else "")
                 for c in board["columns"])


def ranked(board: dict) -> Table:
    """A board's ranked rows: place, system, its mark against the leader (the test as the cell's title), the
    metrics (the primary one classed ``ranked``), questions, split and file (a link to its provenance)."""
    columns = (_col("#", num=True), _col("system"), _col("mark", "against the leader"),
               *_metric_columns(board, True), _col("questions", num=True), _col("split"), _col("file"))
    rows = tuple((_text(i), _text(r["name"]),
                  Cell(r["mark"], r["mark_label"], html_class=f"mark mark-{r['mark']}",
                       title=r["test_title"] if r["test"] else ""),
                  *(_text(r["cells"][c]) for c in board["columns"]), _text(r["questions"]), _text(r["split"]),
                  _file(r)) for i, r in enumerate(board["rows"], 1))
    attrs = tuple({"data-system": r["name"], "data-mark": r["mark"], "data-questions": str(r["questions"])}
                  for r in board["rows"])
    return Table(columns, rows, html_class="board ranked-board", row_attrs=attrs)


def apart(board: dict) -> Table:
    """A board's rows not ranked (smoke tests, or tuned on this set), each with why."""
    columns = (_col("system"), *_metric_columns(board, False), _col("questions", num=True),
               _col("note", "why not ranked"), _col("file"))
    rows = tuple((_text(r["name"]), *(_text(r["cells"][c]) for c in board["columns"]), _text(r["questions"]),
                  _text(r["note"]), _file(r)) for r in board["apart"])
    attrs = tuple({"data-system": r["name"], "data-questions": str(r["questions"])} for r in board["apart"])
    return Table(columns, rows, html_class="board apart-board", row_attrs=attrs)


def _source(claim) -> Cell:
    text = f"{claim.source} ({claim.note})" if claim.note else claim.source
    return Cell(claim.source, text, html_class="url")


def claims(lines: list[dict]) -> Table:
    """A board's published claims beside the measured numbers: the difference in points, or why none."""
    columns = (_col("system"), _col("claimant"), _col("metric"), _col("claimed", num=True),
               _col("measured", num=True), _col("difference", "difference (pp)", num=True), _col("protocol"),
               _col("questions", num=True), _col("source"), _col("date"))
    rows = []
    for line in lines:
        c, diff = line["claim"], line["diff"]
        rows.append((_text(c.system), _text(c.claimant), _text(c.metric), Cell(c.value, fmt_num(c.value, 1)),
                     Cell(line["measured"], fmt_num(line["measured"], 1)),
                     Cell(diff, line["reason"] if diff is None else f"{diff:+.1f}"), _text(c.protocol),
                     _text(c.questions), _source(c), _text(c.date)))
    attrs = tuple({"data-system": line["claim"].system, "data-metric": line["claim"].metric} for line in lines)
    return Table(columns, tuple(rows), html_class="board claims", row_attrs=attrs)


def unmatched(claims_: list) -> Table:
    """The published claims no board here matches (their data set is not among the inputs)."""
    columns = (_col("system"), _col("claimant"), _col("dataset", "data set"), _col("metric"),
               _col("claimed", num=True), _col("protocol"), _col("questions", num=True), _col("source"),
               _col("date"))
    rows = tuple((_text(c.system), _text(c.claimant), Cell(c.dataset, f"{c.dataset} ({c.data})"), _text(c.metric),
                  Cell(c.value, fmt_num(c.value, 1)), _text(c.protocol), _text(c.questions), _source(c),
                  _text(c.date)) for c in claims_)
    return Table(columns, rows, html_class="board claims")


def _outcome(test: dict) -> str:
    """A paired test's class on the page: ``win`` (the row significantly ahead), ``loss`` (significantly behind) or
    ``ns`` (not significant)."""
    return ("win" if test["delta"] > 0 else "loss") if test["significant"] else "ns"


def sig_list(tests: dict) -> Table:
    """A data set page's tests of one metric that share one system (``site.sig_list``): one row per other system,
    the difference in points, its 95% interval, the Holm-adjusted p; each row classed ``win``, ``loss`` or
    ``ns`` (not significant)."""
    columns = (_col("against"), _col("delta", f"{tests['centre']} minus it (pp)", num=True),
               _col("interval", "95% interval", num=True), _col("p_adjusted", "Holm p", num=True), _col("test"),
               _col("questions", num=True))
    rows = tuple((_text(r["system_b"]), Cell(r["delta"], fmt_points(r["delta"], signed=True)),
                  Cell((r["ci_low"], r["ci_high"]), fmt_interval(r["ci_low"], r["ci_high"])),
                  Cell(r["p_adjusted"], f"{r['p_adjusted']:.2g}" + (" (significant)" if r["significant"] else "")),
                  _text(r["test"]), _text(r["questions"])) for r in tests["rows"])
    attrs = tuple({"class": _outcome(r)} for r in tests["rows"])
    return Table(columns, rows, html_class="board siglist", row_attrs=attrs)


def sig_grid(matrix: dict) -> Table:
    """A data set page's systems x systems grid of one metric (``site.sig_matrix``): each tested cell the row
    minus the column in points with its Holm-adjusted p under it, classed ``win`` or ``loss`` when significant,
    else ``ns``, and titled with its test, questions and 95% interval; an untested cell empty, classed ``na``."""
    def grid_cell(c: dict | None) -> Cell:
        if not c:
            return Cell(None, "", html_class="na")
        title = (f"{c['test']}, {c['questions']} questions, 95% CI [{fmt_points(c['ci_low'])}, "
                 f"{fmt_points(c['ci_high'])}]")
        return Cell(c["delta"], fmt_points(c["delta"], signed=True), html_class=_outcome(c), title=title,
                    sub=f"p={c['p_adjusted']:.2g}")

    systems = matrix["systems"]
    columns = (Column("system", "", "left", html_class="", row_header=True),
               *(Column(f"s{i}", s, "left", html_class="") for i, s in enumerate(systems)))
    rows = tuple((Cell(a, a), *(grid_cell(c) for c in row)) for a, row in zip(systems, matrix["cells"], strict=True))
    return Table(columns, rows, title=matrix["metric"], html_class="sig")


def runs(metrics: list[dict]) -> Table:
    """The all-runs table's header (``runs.html``; the page script fills its body from the inline JSON and sorts
    by the column a header's ``data-col`` names): data set, system, file, questions, each metric, the src link."""
    def col(key: str, header: str, num: bool = False) -> Column:
        return replace(_col(key, header, num), header_attrs=(("data-col", key),))

    columns = (col("dataset", "data set"), col("system", "system"), col("file", "file"),
               col("questions", "questions"), *(col(m["key"], m["label"], num=True) for m in metrics),
               _col("src"))
    return Table(columns, (), html_class="board", html_id="board")


def attach(data: dict) -> dict:
    """``data`` (``site.boards_data``) with each table's HTML beside it: ``overview_html`` and
    ``unmatched_html``, and each board's ``ranked_html``, ``apart_html`` and ``claims_html``."""
    for b in data["boards"]:
        b.update(ranked_html=html_text(ranked(b)), apart_html=html_text(apart(b)), claims_html=html_text(claims(
            b["claims"])))
    return {**data, "overview_html": html_text(overview(data["boards"])),
            "unmatched_html": html_text(unmatched(data["unmatched"]))}
