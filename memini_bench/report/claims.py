"""Published claims and their verdicts: ``claims.json`` (package data) read, checked, and each claim judged on the
board of its own data set, protocol and embedder.

One claim (``format`` 2): ``system`` (the harness's system it is compared with), ``claimant`` (who published it),
``dataset`` and ``protocol`` (the data set and its retrieval unit as ``boards.PROTOCOLS`` names them: ``locomo``
at ``turn`` or ``session`` level, ``longmemeval`` at ``session``...), ``data`` (the data file's name without
``.json``), ``embedder`` (the harness's name, ``minilm``, ``mpnet``, ``e5-small``, or the model the claimant used,
``bge-large-en-v1.5``), ``metric`` (a registered name of ``core.metrics``, written canonically: ``recall_any@5``,
``recall_frac@5`` for the share of a question's gold items found, ``mrr@10``, ``ndcg@5``), ``value`` (percent),
``questions`` (N, how many it counts), ``source`` (an http(s) URL), ``date`` (``YYYY-MM-DD`` or ``n.d.``), and
optionally ``llm`` (the model an LLM-judged claim needs) and ``note``.

The verdict (``verdict``), on the full-set board of the claim's data set, protocol, data file and embedder:

- **not comparable**, with the reason, when the claim needs an LLM (not available offline), when no board here
  has its data set, protocol and data file (another data set), when no board of those has its embedder (a model
  not available offline), when the system is not on the board, when the claim counts another number of
  questions (another question set), or when the metric cannot be computed from what the run recorded (a cut-off
  deeper than the recorded ranking, or no per-question records and no bound);
- otherwise the measured value is the claim's metric computed by ``core.metrics`` over the row's per-question
  records, with its 95% interval: Wilson's score interval when every per-question value is 0 or 1 (a
  proportion: recall_any@K), else the percentile bootstrap of the mean (``evaluation.stats.bootstrap_mean``:
  10,000 resamples, seed 0; recall_frac@K, mrr@K, ndcg@K): **reproduced** when the claimed value lies inside
  the interval, else **not reproduced** with the gap
  (claimed minus measured, in points, to one decimal);
- without per-question records, a ``recall_frac@K`` or ``recall_all@K`` claim is still **not reproduced** when it
  exceeds the upper end of the interval of the row's recall_any@K (from its results file, Wilson's interval over
  its N questions): any-hit recall bounds both from above (a question's found share of its gold items is at most 1
  exactly when some gold item is found).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import orjson

from memini_bench.errors import BenchError

FIELDS = {"system": str, "claimant": str, "dataset": str, "protocol": str, "data": str, "embedder": str,
          "metric": str, "value": (int, float), "questions": int, "source": str, "date": str}
OPTIONAL = {"note": str, "llm": str}
DATE = re.compile(r"^(\d{4}-\d{2}-\d{2}|n\.d\.)$")
#: The verdicts, in the claims page's order.
VERDICTS = ("reproduced", "not reproduced", "not comparable")
#: Metrics that recall_any@K bounds from above (a question scores 1 on them only when some gold item is found).
BOUNDED_BY_ANY = ("recall_frac", "recall_all")


@dataclass(frozen=True)
class Claim:
    system: str
    claimant: str
    dataset: str
    protocol: str
    data: str
    embedder: str
    metric: str
    value: float
    questions: int
    source: str
    date: str
    note: str = ""
    llm: str = ""


def _metric_problem(name: str) -> str:
    """Why ``name`` is not a registered metric's canonical name ("" when it is)."""
    from memini_bench.core.metrics import parse

    try:
        metric = parse(name, flag="metric")
    except BenchError as exc:
        return str(exc)
    if metric.unit != "fraction":
        return f"metric {name!r} is not a rate (a percent claim needs one)"
    return "" if metric.name == name else f"metric {name!r}: write the registered name {metric.name!r}"


def parse(doc: object, where: str) -> list[Claim]:
    """The claims of a ``claims.json`` document; a BenchError naming the entry and field on anything malformed."""
    if not isinstance(doc, dict) or doc.get("format") != 2 or not isinstance(doc.get("claims"), list):
        raise BenchError(f"{where}: expected {{\"format\": 2, \"claims\": [...]}}")
    out = []
    for n, entry in enumerate(doc["claims"]):
        at = f"{where}: claim {n}"
        if not isinstance(entry, dict):
            raise BenchError(f"{at}: expected an object")
        unknown = set(entry) - set(FIELDS) - set(OPTIONAL)
        if unknown:
            raise BenchError(f"{at}: unknown field(s) {', '.join(sorted(unknown))}")
        for name, kind in {**FIELDS, **OPTIONAL}.items():
            if name not in entry:
                if name in FIELDS:
                    raise BenchError(f"{at}: missing field {name!r}")
                continue
            value = entry[name]
            if not isinstance(value, kind) or isinstance(value, bool) or (isinstance(value, str) and not value):
                raise BenchError(f"{at}: field {name!r} should be a non-empty {getattr(kind, '__name__', 'number')}")
        metric_why = _metric_problem(entry["metric"])
        checks = ((not metric_why, metric_why),
                  (0 <= entry["value"] <= 100, "value is a percent (0..100)"),
                  (entry["questions"] > 0, "questions should be positive"),
                  (re.match(r"^https?://\S+$", entry["source"]), "source should be an http(s) URL"),
                  (DATE.match(entry["date"]), "date should be YYYY-MM-DD or n.d."))
        for ok, why in checks:
            if not ok:
                raise BenchError(f"{at}: {why}")
        out.append(Claim(**{**entry, "value": float(entry["value"])}))
    return out


def load(path: Path | None = None) -> list[Claim]:
    """The claims of ``path`` (default: the package's ``claims.json``)."""
    if path is None:
        text = (resources.files("memini_bench.report") / "claims.json").read_bytes()
        where = "claims.json"
    else:
        text, where = path.read_bytes(), str(path)
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise BenchError(f"{where}: not JSON ({exc})") from None
    return parse(doc, where)


def _line(claim: Claim, board=None, **rest) -> dict:
    line = {"claim": claim, "board": board.key if board is not None else "",
            "board_slug": board.slug if board is not None else "", "board_title": "", "verdict":
            "not comparable", "measured": None, "low": None, "high": None, "gap": None, "bound": False,
            "reason": "", "row_questions": None}
    if board is not None:
        line["board_title"] = f"{board.title} · {board.embedder}" if board.embedder else board.title
    line.update(rest)
    return line


def _judge(line: dict) -> dict:
    """Set the verdict and gap of a measured line (values in percent)."""
    claimed, low, high = line["claim"].value, line["low"], line["high"]
    if line["bound"]:
        line["verdict"], line["gap"] = "not reproduced", _points(claimed - high)
    elif low - 1e-9 <= claimed <= high + 1e-9:
        line["verdict"] = "reproduced"
    else:
        line["verdict"] = "not reproduced"
        line["gap"] = _points(claimed - line["measured"])
    return line


def _points(x: float) -> float:
    x = round(x, 1)
    return x if x != 0 else 0.0  # never "-0.0"


def measure(claim: Claim, board) -> dict:
    """A claim on its board (the caller found the board of its data set, protocol, data file and embedder)."""
    from memini_bench.core.metrics import parse as parse_metric
    from memini_bench.evaluation.stats import bootstrap_mean
    from memini_bench.report.model import wilson

    row = next((r for r in board.rows + board.apart if r.name == claim.system), None)
    if row is None:
        return _line(claim, board, reason=f"{claim.system} is not on this board")
    if row.questions != claim.questions:
        return _line(claim, board, row_questions=row.questions,
                     reason=f"the claim counts {claim.questions} questions, this board {row.questions}: another "
                            "question set")
    metric = parse_metric(claim.metric, flag="metric")
    run = next((r for r in row.source.runs if r.system == row.system), None)
    if run is not None:
        if metric.k is not None and metric.k > run.depth:
            return _line(claim, board, row_questions=row.questions,
                         reason=f"{claim.metric} needs the top {metric.k}; the run recorded the top {run.depth}")
        values = [metric.per_question(q) for q in run.questions]
        mean = sum(values) / len(values) if values else 0.0
        if all(v in (0.0, 1.0) for v in values):  # a proportion: Wilson's interval
            low, high = wilson(mean, len(values))
        else:
            ci = bootstrap_mean(values)
            low, high = ci.low, ci.high
        return _judge(_line(claim, board, row_questions=row.questions, measured=mean * 100, low=low * 100,
                            high=high * 100))
    summary = row.score(claim.metric)
    if summary is not None and metric.family == "recall_any":
        low, high = wilson(summary, row.questions)
        return _judge(_line(claim, board, row_questions=row.questions, measured=summary * 100, low=low * 100,
                            high=high * 100))
    bound = row.score(f"recall_any@{metric.k}") if metric.family in BOUNDED_BY_ANY and metric.k else None
    if bound is not None:
        high = wilson(bound, row.questions)[1] * 100
        if claim.value > high:
            return _judge(_line(claim, board, row_questions=row.questions, measured=bound * 100, high=high,
                                low=None, bound=True,
                                reason=f"no per-question records: {claim.metric} is at most recall_any@{metric.k} "
                                       f"{bound * 100:.1f} (95% interval up to {high:.1f})"))
    return _line(claim, board, row_questions=row.questions,
                 reason=f"no per-question records for {row.name} in {row.source.name}: {claim.metric} is computed "
                        "from them")


def verdict(claim: Claim, boards: list) -> dict:
    """A claim's line on the claims page (module docstring): its verdict, the measured value and interval, the
    gap or the reason, and the board it was judged on."""
    from memini_bench.report.boards import protocol_of

    if claim.llm:
        return _line(claim, reason=f"judged by the LLM {claim.llm}, not available offline")
    full = [b for b in boards if b.split == "full" and protocol_of(b.dataset) == (claim.dataset, claim.protocol)]
    here = [b for b in full if b.data == claim.data]
    if not here:
        have = sorted({b.data for b in full})
        return _line(claim, reason=f"another data set: {claim.data} ({claim.dataset}, {claim.protocol} level) is not "
                                   "among the results here" + (f" (here: {', '.join(have)})" if have else ""))
    board = next((b for b in here if b.embedder == claim.embedder), None)
    if board is None:
        have = ", ".join(sorted({b.embedder for b in here}))
        return _line(claim, reason=f"embedder {claim.embedder} is not available offline (boards here: {have})")
    return measure(claim, board)


def verdicts(claims: list[Claim], boards: list) -> list[dict]:
    """Every claim's line, sorted by verdict (``VERDICTS``' order), then claimant, system and metric."""
    lines = [verdict(c, boards) for c in claims]
    return sorted(lines, key=lambda x: (VERDICTS.index(x["verdict"]), x["claim"].claimant.lower(),
                                        x["claim"].system, x["claim"].dataset, x["claim"].protocol,
                                        x["claim"].metric, x["claim"].value))


def for_boards(lines: list[dict]) -> dict[str, list[dict]]:
    """The judged lines per board key (lines judged on no board are on the claims page only)."""
    out: dict[str, list[dict]] = {}
    for line in lines:
        if line["board"]:
            out.setdefault(line["board"], []).append(line)
    return out
