"""One table model, several renderers: a ``Table`` (columns, rows of cells, best and significance marks, a title
and footnotes) rendered as Markdown, CSV, LaTeX (booktabs), HTML or JSON.

A ``Cell`` holds its value (a number, a string or None) and its text as printed (``fmt_pct`` and friends: the one
place a fraction becomes a percent); ``best`` and ``marks`` are what the cell is marked with. Each renderer says the
marks its own way: Markdown and HTML bold the best (Markdown only when the table asks: ``bold_best``), LaTeX bolds
it and appends each mark as a superscript; CSV and JSON carry the raw value beside the text. A table states its N
and what each mark means in ``notes``; the LaTeX and HTML renderers always print them (LaTeX as comment lines under
the tabular, HTML as a ``<tfoot>``), the Markdown renderer prints them under the table when ``notes_in_markdown``
(a table whose Markdown other documents embed keeps its bytes). ``marks`` of a table maps each mark to its meaning;
a row of its own (``Table.groups``) separates data sets in LaTeX with ``\\midrule``.

The HTML renderer also carries what an interactive page needs, and the other renderers ignore it: the table's
``html_class`` and ``html_id``, each row's attributes (``row_attrs``: the ``data-*`` a page script reads), a
column's and a cell's class (``html_class``; unset, the column's alignment), a header cell's attributes
(``header_attrs``), a cell's ``title`` and link (``href``,
``link_class``), a second small line under a cell's text (``sub``) and a column of row labels (``row_header``:
``<th>`` cells). Every text and attribute value is escaped (``html.escape``, quotes included).
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import orjson

FORMATS = ("md", "csv", "latex", "html", "json")


def fmt_pct(x: float | None, digits: int = 1, sign: str = "%", signed: bool = False) -> str:
    """A fraction as a percent (``0.8123`` -> ``81.2%``; ``signed``: a difference in points, ``+1.2``); ``-`` for
    None. The one place the project turns a fraction into a percent."""
    return "-" if x is None else f"{x * 100:{'+' if signed else ''}.{digits}f}{sign}"


def fmt_points(x: float | None, digits: int = 1, signed: bool = False) -> str:
    """A fraction as a percent without the sign (``81.2``; ``signed``: ``+1.2``), for a column whose header or
    caption says it is in percent; ``-`` for None."""
    return fmt_pct(x, digits, "", signed)


def fmt_share(part: float, whole: float, digits: int = 1) -> str:
    """``part`` of ``whole`` as a percent (``3, 4`` -> ``75.0%``); ``-`` when ``whole`` is 0."""
    return fmt_pct(part / whole, digits) if whole else "-"


def fmt_interval(low: float, high: float, digits: int = 1) -> str:
    """A confidence interval of a difference of fractions, in signed points: ``[-1.2, +3.4]``."""
    return f"[{fmt_points(low, digits, True)}, {fmt_points(high, digits, True)}]"


def fmt_num(x: float | None, digits: int = 2) -> str:
    """A number to ``digits`` decimals (milliseconds, tokens); ``-`` for None."""
    return "-" if x is None else f"{x:.{digits}f}"


@dataclass(frozen=True)
class Column:
    """One column: ``key`` (the JSON/CSV name), ``header`` (as printed), alignment, which way is better (for the
    best mark: "higher", "lower" or "" for none) and, for Markdown, its separator cell (``---:`` by default for a
    right-aligned column)."""

    key: str
    header: str
    align: str = "right"
    better: str = ""
    rule: str = ""
    html_class: str | None = None  # the class of its <th> and, by default, of its cells; None: the alignment
    header_attrs: tuple[tuple[str, str], ...] = ()  # HTML only: more attributes of its <th> (a data-* a script reads)
    row_header: bool = False       # HTML only: its cells are <th> (a grid's row labels)

    @property
    def md_rule(self) -> str:
        return self.rule or ("--:" if self.align == "right" else "---")


@dataclass(frozen=True)
class Cell:
    """A value and its text; ``best`` (bold where the renderer or table marks the best), ``marks`` (symbols the
    table's ``marks`` explain) and ``strong`` (bold in every format: a significant difference)."""

    value: object
    text: str
    best: bool = False
    marks: tuple[str, ...] = ()
    strong: bool = False
    html_class: str | None = None  # HTML only: this cell's class; None: its column's
    title: str = ""                # HTML only: the cell's title attribute (a tooltip)
    href: str = ""                 # HTML only: the text is a link to this address
    link_class: str = ""           # HTML only: the link's class
    sub: str = ""                  # HTML only: a second, smaller line under the text (a grid cell's p value)


def cell(value: object, formatter: Callable[[object], str] = str) -> Cell:
    return Cell(value, formatter(value))


@dataclass(frozen=True)
class Table:
    """Columns, rows (one ``Cell`` per column), the title (a Markdown heading line, printed as given), footnotes
    (N, what each mark means) and ``marks`` (mark -> meaning: ``{"†": "differs from the best ..."}``)."""

    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    title: str = ""
    notes: tuple[str, ...] = ()
    marks: dict[str, str] = field(default_factory=dict)
    groups: tuple[int, ...] = ()   # row indices that start a new group (a data set): a rule before them in LaTeX
    bold_best: bool = False        # bold the best cells in Markdown too
    notes_in_markdown: bool = False
    html_class: str = ""           # HTML only: the <table>'s class and id
    html_id: str = ""
    row_attrs: tuple[dict[str, str], ...] = ()  # HTML only: each row's attributes (one dict per row, or none)

    def with_best(self) -> Table:
        """This table with each column's best cell (per group) marked, by the column's ``better``; ties all marked,
        a column of no numbers untouched."""
        starts = sorted({0, *self.groups, len(self.rows)})
        rows = [list(r) for r in self.rows]
        for j, col in enumerate(self.columns):
            if not col.better:
                continue
            for a, b in zip(starts, starts[1:], strict=False):
                values = [r[j].value for r in rows[a:b] if isinstance(r[j].value, int | float)]
                if not values:
                    continue
                best = max(values) if col.better == "higher" else min(values)
                for r in rows[a:b]:
                    if r[j].value == best:
                        r[j] = replace(r[j], best=True, strong=False)
        return replace(self, rows=tuple(tuple(r) for r in rows))

    def plain(self) -> Table:
        """This table without best marks, marks or notes (a table other documents embed as it was)."""
        return replace(self, rows=tuple(tuple(Cell(c.value, c.text) for c in r) for r in self.rows), notes=(),
                       marks={})

    def only(self, keys: Sequence[str]) -> Table:
        """This table with the columns ``keys`` alone, in that order."""
        index = [next(i for i, c in enumerate(self.columns) if c.key == key) for key in keys]
        return replace(self, columns=tuple(self.columns[i] for i in index),
                       rows=tuple(tuple(r[i] for i in index) for r in self.rows))


def markdown(t: Table) -> str:
    """The Markdown table (title line and a blank line first when there is a title)."""
    def text(c: Cell) -> str:
        s = c.text + "".join(c.marks)
        return f"**{s}**" if (c.best and t.bold_best) or c.strong else s

    out = [t.title, ""] if t.title else []
    out.append("| " + " | ".join(c.header for c in t.columns) + " |")
    out.append("|" + "|".join(c.md_rule for c in t.columns) + "|")
    out += ["|" + "".join(f" {text(c)} |" if text(c) else " |" for c in row) for row in t.rows]  # empty: "| |"
    if t.notes_in_markdown and t.notes:
        out += ["", *t.notes]
    return "\n".join(out) + "\n"


def csv_text(t: Table) -> str:
    """One line per row: every column's raw value (full precision), then its printed text where it differs."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([c.key for c in t.columns])
    for row in t.rows:
        w.writerow(["" if c.value is None else repr(c.value) if isinstance(c.value, float) else c.value
                    for c in row])
    return buf.getvalue()


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
#: How each mark symbol is set in LaTeX.
TEX_MARKS = {"†": r"$^\dagger$", "‡": r"$^\ddagger$", "*": r"$^*$", "°": r"$^\circ$"}


def tex_escape(text: str) -> str:
    return "".join(_TEX.get(c, c) for c in text)


def latex(t: Table, source: str = "") -> str:
    """A booktabs ``tabular``; the best cell bold, each mark a superscript; the notes (N, what bold and each mark
    mean, and that no mark means no test or no difference) as comment lines under it."""
    def text(c: Cell) -> str:
        s = tex_escape(c.text)
        s = rf"\textbf{{{s}}}" if c.best or c.strong else s
        return s + "".join(TEX_MARKS.get(m, f"$^{{{tex_escape(m)}}}$") for m in c.marks)

    out = [f"% {source}; needs \\usepackage{{booktabs}}" if source else r"% needs \usepackage{booktabs}",
           r"\begin{tabular}{" + "".join({"right": "r", "center": "c"}.get(c.align, "l") for c in t.columns) + "}",
           r"\toprule",
           " & ".join(tex_escape(c.header) for c in t.columns) + r" \\", r"\midrule"]
    for i, row in enumerate(t.rows):
        if i and i in t.groups:
            out.append(r"\midrule")
        out.append(" & ".join(text(c) for c in row) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    out += [f"% {note}" for note in t.notes]
    return "\n".join(out) + "\n"


def _attrs(pairs: Sequence[tuple[str, str | None]]) -> str:
    """`` key="value"`` for each pair whose value is not None, every key and value escaped."""
    return "".join(f' {html.escape(k)}="{html.escape(v, quote=True)}"' for k, v in pairs if v is not None)


def html_text(t: Table) -> str:
    """An HTML ``<table>``: the title as its caption, the best cell in ``<strong>``, marks as ``<sup>``, the notes
    in a ``<tfoot>``; the table's, rows' and cells' HTML attributes (module docstring)."""
    def cls(name: str | None, col: Column) -> str | None:
        name = col.align if name is None and col.html_class is None else col.html_class if name is None else name
        return name or None

    def td(col: Column, c: Cell) -> str:
        s = html.escape(c.text)
        if c.href:
            s = f"<a{_attrs([('class', c.link_class or None), ('href', c.href)])}>{s}</a>"
        s = f"<strong>{s}</strong>" if c.best or c.strong else s
        s += "".join(f"<sup>{html.escape(m)}</sup>" for m in c.marks)
        s += f"<br><small>{html.escape(c.sub)}</small>" if c.sub else ""
        tag = "th" if col.row_header else "td"
        return f"<{tag}{_attrs([('class', cls(c.html_class, col)), ('title', c.title or None)])}>{s}</{tag}>"

    def tr(i: int) -> str:
        return f"<tr{_attrs(list(t.row_attrs[i].items()) if i < len(t.row_attrs) else [])}>"

    out = [f"<table{_attrs([('class', t.html_class or None), ('id', t.html_id or None)])}>"]
    if t.title:
        out.append(f"<caption>{html.escape(t.title.lstrip('#').strip())}</caption>")
    out.append("<thead><tr>" + "".join(f"<th{_attrs([('class', cls(None, c)), *c.header_attrs])}>"
                                       f"{html.escape(c.header)}</th>" for c in t.columns) + "</tr></thead>")
    out.append("<tbody>")
    out += [tr(i) + "".join(td(col, c) for col, c in zip(t.columns, row, strict=True)) + "</tr>"
            for i, row in enumerate(t.rows)]
    out.append("</tbody>")
    if t.notes:
        out.append(f'<tfoot><tr><td colspan="{len(t.columns)}">' + "<br>".join(html.escape(n) for n in t.notes)
                   + "</td></tr></tfoot>")
    out.append("</table>")
    return "\n".join(out) + "\n"


def json_text(t: Table) -> str:
    """``{"title", "columns": [{key, header, better}], "rows": [{key: {"value", "text", "best", "marks"}}],
    "notes", "marks"}``."""
    doc = {"title": t.title, "columns": [{"key": c.key, "header": c.header, "better": c.better} for c in t.columns],
           "rows": [{col.key: {"value": c.value, "text": c.text, "best": c.best, "marks": list(c.marks),
                               "strong": c.strong}
                     for col, c in zip(t.columns, row, strict=True)} for row in t.rows],
           "notes": list(t.notes), "marks": t.marks}
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY).decode() + "\n"


RENDERERS: dict[str, Callable[[Table], str]] = {"md": markdown, "csv": csv_text, "latex": latex,
                                                "html": html_text, "json": json_text}


def render(t: Table, fmt: str, **options: str) -> str:
    """``t`` in ``fmt`` (``FORMATS``); ``options`` go to the renderer (``source`` for LaTeX's first line)."""
    return RENDERERS[fmt](t, **options)  # type: ignore[call-arg]


def table_of(header: str, rows: Sequence[Sequence[Cell | tuple[object, str] | str]], **fields: object) -> Table:
    """A table from a compact spec: ``header`` as ``name:align`` columns joined by ``|`` (align ``l``, ``r`` or
    ``c``; the name is also the column's key), each row a sequence of ``(value, text)`` pairs or plain texts (their
    own value) or ``Cell``s; ``fields`` are the rest of ``Table``'s (``title``, ``notes``, ...)."""
    def column(spec: str) -> Column:
        name, _, align = spec.rpartition(":")
        where = {"l": "left", "c": "center"}.get(align, "right")
        return Column(name, name, where, rule=":-:" if where == "center" else "")

    body = tuple(tuple(c if isinstance(c, Cell) else Cell(*c) if isinstance(c, tuple) else Cell(c, c) for c in r)
                 for r in rows)
    return Table(tuple(column(h) for h in header.split("|")), body, **fields)  # type: ignore[arg-type]
