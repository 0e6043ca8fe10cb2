"""Published claims beside measured numbers: ``claims.json`` (package data) read, checked, and matched to boards.

One claim: ``system`` (the harness's system name it is compared with), ``claimant`` (who published it), ``dataset``
and ``data`` (the board: a results file's ``config.dataset`` and its data file's name without ``.json``),
``metric`` (``R@5``, ``R@10``, ``R@K`` for any K, or ``MRR``), ``value`` (percent), ``protocol`` (``any-hit``:
a question counts when any gold item is in the top K, the harness's R@K; ``fractional``: the share of its gold
items found; ``all-hit``: all of them), ``questions`` (how many the claim counts), ``source`` (an http(s) URL),
``date`` (``YYYY-MM-DD``, or ``n.d.`` when the source gives none), optional ``note``.

A claim is set beside the board of its data set (the full set: claims are never made on the harness's held
split) and that board's row of its system. It is *comparable* only when the protocols agree (``any-hit``; MRR's
definition is one) and the claim counts the board's number of questions; otherwise it shows ``not comparable`` and
the reason (no conversion between protocols or question counts is exact in general, so none is made). The
difference is measured minus claimed, in percentage points, to one decimal (as the claims are published).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import orjson

from memini_bench.errors import BenchError

FIELDS = {"system": str, "claimant": str, "dataset": str, "data": str, "metric": str, "value": (int, float),
          "protocol": str, "questions": int, "source": str, "date": str}
OPTIONAL = {"note": str}
PROTOCOLS = ("any-hit", "fractional", "all-hit")
METRIC = re.compile(r"^(R@[1-9][0-9]*|MRR)$")
DATE = re.compile(r"^(\d{4}-\d{2}-\d{2}|n\.d\.)$")


@dataclass(frozen=True)
class Claim:
    system: str
    claimant: str
    dataset: str
    data: str
    metric: str
    value: float
    protocol: str
    questions: int
    source: str
    date: str
    note: str = ""


def parse(doc: object, where: str) -> list[Claim]:
    """The claims of a ``claims.json`` document; a BenchError naming the entry and field on anything malformed."""
    if not isinstance(doc, dict) or doc.get("format") != 1 or not isinstance(doc.get("claims"), list):
        raise BenchError(f"{where}: expected {{\"format\": 1, \"claims\": [...]}}")
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
        checks = ((METRIC.match(entry["metric"]), "metric should be R@K or MRR"),
                  (entry["protocol"] in PROTOCOLS, f"protocol should be one of {', '.join(PROTOCOLS)}"),
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


def _measured(row, metric: str) -> float | None:
    if metric == "MRR":
        values = [v.get("mrr") for v in row.by_k.values() if v.get("mrr") is not None]
        return values[0] if values else None
    return row.value("recall_any@K", int(metric[2:]))


def beside(claim: Claim, board) -> dict:
    """One line of a board's claims section: the claim, the measured number, the difference or why none."""
    row = next((r for r in board.rows + board.apart if r.name == claim.system), None)
    line = {"claim": claim, "measured": None, "diff": None, "reason": ""}
    if row is None:
        line["reason"] = f"{claim.system} is not on this board"
        return line
    measured = _measured(row, claim.metric)
    if measured is None:
        line["reason"] = f"no {claim.metric} in {row.source.name}"
        return line
    line["measured"] = measured * 100
    if claim.protocol != "any-hit":
        line["reason"] = (f"not comparable: the claim counts {claim.protocol} recall, this harness any-hit recall "
                          "(a question counts when any gold item is in the top K); no exact conversion")
    elif claim.questions != row.questions:
        line["reason"] = (f"not comparable: the claim counts {claim.questions} questions, this board {row.questions}"
                          "; no exact conversion")
    else:
        diff = round(line["measured"] - claim.value, 1)
        line["diff"] = diff if diff != 0 else 0.0  # never "-0.0"
    return line


def for_boards(claims: list[Claim], boards: list) -> tuple[dict[str, list[dict]], list[Claim]]:
    """Claims per board key (on the full-set board of their data set), and the claims no board here matches."""
    by_board: dict[str, list[dict]] = {}
    unmatched = []
    for claim in claims:
        board = next((b for b in boards if b.split == "full" and b.dataset == claim.dataset
                      and b.data == claim.data), None)
        if board is None:
            unmatched.append(claim)
        else:
            by_board.setdefault(board.key, []).append(beside(claim, board))
    return by_board, unmatched
