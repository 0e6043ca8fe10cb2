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


def _tied(b: dict) -> str:
    """The overview's "not significantly different" cell: the rows, or why none (never a bare "-")."""
    if b["tied"]:
        return ", ".join(b["tied"])
    if not b["rows"]:
        return "no ranked row"
    if len(b["rows"]) == 1:
        return "no other ranked row"
    return f"none of {b['tested']} tested" if b["tested"] else "no row tested"


def overview(boards: list[dict], html_id: str = "overview") -> Table:
    """One row per board: its title (a link to its section), split, embedder (the page script makes it a selector
    among the boards of one data set, protocol and split), questions, primary metric, leader, the rows not
    significantly different from it, and how many rows are tested, behind, untested (never counted as behind) and
    apart."""
    columns = (_col("board"), _col("split"), _col("embedder", extra="embedder"), _col("questions", num=True),
               _col("primary"), _col("leader"), _col("tied", "not significantly different from the leader"),
               _col("tested", "tested against the leader", num=True), _col("behind", num=True),
               _col("untested", num=True, extra="untested"), _col("apart", "smoke tests / apart", num=True))
    rows = tuple((Cell(b["title"], b["title"], href=f"#board-{b['slug']}"), _text(b["split_label"]),
                  _text(b["embedder_label"]), _text(b["questions"]), _text(b["primary"]),
                  Cell(b["leader"], f"{b['leader']} {b['leader_value']}", strong=True) if b["leader"]
                  else Cell(None, "none ranked"),
                  Cell(b["tied"], _tied(b)), _text(b["tested"]), _text(b["behind"]),
                  Cell(len(b["untested"]), str(len(b["untested"])), title=", ".join(b["untested"])),
                  _text(len(b["apart"]))) for b in boards)
    return Table(columns, rows, html_class="board overview", html_id=html_id,
                 row_attrs=tuple({"data-board": b["key"], "data-group": b["group"], "data-embedder": b["embedder"]}
                                 for b in boards))


def best_per_embedder(boards: list[dict], embedders: list[str]) -> Table:
    """One row per data set, protocol and split; per embedder the leader of its board and the primary metric's
    value (a link to the board), ``-`` where no board has that embedder. Leaders of different embedders are
    never tested against each other (their vectors differ)."""
    groups: dict[str, dict[str, dict]] = {}
    for b in boards:
        groups.setdefault(b["group"], {})[b["embedder_label"]] = b
    columns = (_col("board"), _col("split"), _col("primary"), *(_col(f"e:{e}", e) for e in embedders))
    rows = []
    for by_embedder in groups.values():
        first = next(iter(by_embedder.values()))
        cells = []
        for e in embedders:
            b = by_embedder.get(e)
            cells.append(Cell(None, "-") if b is None or not b["leader"] else
                         Cell(b["leader"], f"{b['leader']} {b['leader_value']}", href=f"#board-{b['slug']}"))
        rows.append((_text(first["title"]), _text(first["split_label"]), _text(first["primary"]), *cells))
    return Table(columns, tuple(rows), html_class="board best-embedder", html_id="best-per-embedder",
                 row_attrs=tuple({"data-group": g} for g in groups))


def _metric_columns(board: dict, rank: bool) -> tuple[Column, ...]:
    return tuple(_col(c, num=True, extra="ranked" if rank and c == board["primary"] else "")
                 for c in board["columns"])


def ranked(board: dict) -> Table:
    """A board's ranked rows: place, system, its mark against the leader (the test, or why untested, as the
    cell's title), the metrics (the primary one classed ``ranked``), questions, split and file (a link to its
    provenance)."""
    columns = (_col("#", num=True), _col("system"), _col("mark", "against the leader"),
               *_metric_columns(board, True), _col("questions", num=True), _col("split"), _col("file"))
    rows = tuple((_text(i), _text(r["name"]),
                  Cell(r["mark"], r["mark_label"], html_class=f"mark mark-{r['mark']}", title=r["test_title"]),
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


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def claims(lines: list[dict], html_id: str = "") -> Table:
    """Published claims with their verdicts (``report.claims``): the verdict, the claim (system, claimant, data
    set, protocol, embedder, metric, N, value), the measured value with its 95% interval and the gap (claimed
    minus measured, points), or the reason it is not comparable; then the source and date."""
    columns = (_col("verdict"), _col("system"), _col("claimant"), _col("dataset", "data set"), _col("protocol"),
               _col("embedder"), _col("metric"), _col("questions", "N", num=True), _col("claimed", num=True),
               _col("measured", num=True), _col("interval", "95% interval", num=True),
               _col("gap", "gap (pp)", num=True), _col("reason", "why"), _col("source"), _col("date"))
    rows = []
    for line in lines:
        c = line["claim"]
        measured, gap = _pct(line["measured"]), "-" if line["gap"] is None else f"{line['gap']:+.1f}"
        interval = "-" if line["low"] is None else f"[{_pct(line['low'])}, {_pct(line['high'])}]"
        if line["bound"]:  # no records: the metric is at most recall_any@K, whose interval ends at "high"
            measured, interval, gap = f"\u2264 {measured}", f"\u2264 {_pct(line['high'])}", f"\u2265 {gap}"
        kind = line["verdict"].replace(" ", "-")
        verdict = Cell(line["verdict"], line["verdict"], html_class=f"verdict verdict-{kind}")
        rows.append((verdict, _text(c.system), _text(c.claimant), Cell(c.dataset, f"{c.dataset} ({c.data})"),
                     _text(c.protocol), _text(c.embedder), _text(c.metric), _text(c.questions),
                     Cell(c.value, fmt_num(c.value, 1)), Cell(line["measured"], measured),
                     Cell((line["low"], line["high"]), interval),
                     Cell(line["gap"], gap),
                     Cell(line["reason"], line["reason"] or f"measured on {line['board_title']}",
                          href=f"index.html#board-{line['board_slug']}" if line.get("board_slug") else ""),
                     _source(c), _text(c.date)))
    attrs = tuple({"data-system": line["claim"].system, "data-metric": line["claim"].metric,
                   "data-verdict": line["verdict"]} for line in lines)
    return Table(columns, tuple(rows), html_class="board claims", html_id=html_id, row_attrs=attrs)


def pareto_rest(rows: list[dict], metric: str) -> Table:
    """The rows of a board left out of its recall-against-latency figure: system, the primary metric, p50 latency
    and questions, in the primary metric's order."""
    columns = (_col("system"), _col(metric, num=True), _col("latency_p50", "p50 ms", num=True),
               _col("questions", num=True))
    body = tuple((_text(r["name"]), Cell(r["value"], fmt_points(r["value"])), Cell(r["p50"], fmt_num(r["p50"])),
                  _text(r["questions"])) for r in rows)
    return Table(columns, body, html_class="board pareto-rest",
                 row_attrs=tuple({"data-system": r["name"]} for r in rows))


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def qa_accuracy(config: dict, results: list) -> Table:
    """A QA results file's accuracy per run (arm) and judge: correct of the questions judged with a label
    (``qa.summary``: unparseable verdicts left out), the accuracy and its 95% Wilson interval; entries without
    whole, non-negative counts are left out."""
    from memini_bench.report.model import wilson

    qa = config.get("qa") if isinstance(config.get("qa"), dict) else {}
    judge = str(qa.get("judge_model") or ", ".join(map(str, qa.get("judge_models") or [])) or "?")
    reader = str(qa.get("reader_model") or "?")
    columns = (_col("arm", "run (arm)"), _col("reader"), _col("judge"), _col("judged", num=True),
               _col("correct", num=True), _col("accuracy", "accuracy (%)", num=True),
               _col("interval", "95% interval", num=True))
    body = []
    for r in results:
        if not isinstance(r, dict) or not _count(r.get("questions")) or not _count(r.get("correct")):
            continue
        judged = r["questions"] - (r.get("unparseable") if _count(r.get("unparseable")) else 0)
        if judged <= 0 or r["correct"] > judged:
            continue
        acc = r["correct"] / judged
        low, high = wilson(acc, judged)
        body.append((_text(r.get("arm", "?")), _text(reader), _text(judge), _text(judged), _text(r["correct"]),
                     Cell(acc, fmt_points(acc), strong=True),
                     Cell((low, high), f"[{fmt_points(low)}, {fmt_points(high)}]")))
    return Table(columns, tuple(body), html_class="board qa-accuracy",
                 row_attrs=tuple({"data-arm": str(row[0].value)} for row in body))


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
    """``data`` (``site.boards_data``) with each table's HTML beside it: ``overview_html`` (the boards with a row
    over the smoke-test minimum), ``smoke_html`` (boards of smoke tests only, folded under it), ``best_html``
    (best per embedder) and ``claims_html`` (the claims page), and each board's ``ranked_html``, ``apart_html``
    and ``claims_html``."""
    for b in data["boards"]:
        b.update(ranked_html=html_text(ranked(b)), apart_html=html_text(apart(b)),
                 claims_html=html_text(claims(b["claims"])))
    shown = [b for b in data["boards"] if not b["smoke"]]
    smoke = [b for b in data["boards"] if b["smoke"]]
    return {**data, "overview_html": html_text(overview(shown)),
            "smoke_html": html_text(overview(smoke, "overview-smoke")) if smoke else "",
            "best_html": html_text(best_per_embedder(shown, data["embedders"])),
            "claims_html": html_text(claims(data["claims"], "claims"))}
