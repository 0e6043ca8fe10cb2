"""Boards: one leaderboard per data set, protocol, split and embedder, each system once, tested against the board's
leader.

- A *board* is every compare run of one data set and protocol (``config.dataset`` without its holdout suffix, and
  the data file), on one split (``held``: ``-holdout held`` runs; ``full``: the whole set; ``tune``), with one
  embedder (the identity's ``embedder``): the rows of a board share their vectors, so a row differs from another
  by its system alone. The index shows one row per data set, protocol and split, the embedder a selector (MiniLM
  first), and apart from it the best row per embedder. A data set on which a system's settings were chosen (the
  tune split of a ``-holdout`` study: the system a held run's paired tests centre on, e.g. ``reference``) has a
  held board; on its full board that system is listed apart (its full-set number includes the questions it was
  tuned on).
- *Each system once*: rows of one system and one identity (``config.identity`` less the systems list and the
  holdout) keep one file: of those that hold the board's primary metric (so a later run at other Ks never hides
  the run the board ranks by), those with per-question records for it, then the newest (its commit's date, then
  the path). A file made before a system's recipe changed
  under the same name (``RENAMED``) shows that row under the older recipe's current name. One name with two
  identities is two rows; the identity the most files share keeps the bare name, another gets the settings that
  differ in brackets (``memini-hybrid [reinforce]``).
- *Ranked* rows answer at least ``MIN_QUESTIONS`` questions (fewer: a smoke test, listed apart, never ranked; a
  board of smoke tests only is folded under the overview).
- *Primary metric* (``primary_metric``), a rule from the board's data, never a per-data-set constant: with n the
  mean number of items a question searches (``config.items`` over the groups the questions fall in; one group for
  a shared haystack), recall_any@K at K = 10 (else the largest K of the runs) among the Ks <= n / ``SATURATION``;
  ``mrr`` where no K is that small (LoCoMo at session level: 27 sessions a conversation, so recall_any@5). The
  leader is the ranked row with the highest value (ties: the first in name order) among the rows with
  per-question records (``collect.eligible``: a row without them cannot be tested, so it never leads; it ranks
  after those with them).
- *Marks*: every other ranked row is tested against the leader on the primary metric from the per-question
  records (``core.metrics``: exact McNemar for recall_any@K, the paired bootstrap for MRR, on the questions both
  answered, ``evaluation.stats.compare``), Holm-adjusted across the board (``evaluation.stats.adjust``): ``best``
  (the leader), ``tied`` (not significantly different from the best), ``behind`` (significantly behind),
  ``untested`` (no per-question records for it or the leader, or fewer than ``MIN_QUESTIONS`` questions in
  common: counted apart from the tested rows, never as behind); ``ahead`` only where the questions both answered
  differ from the ones the board's numbers count and the row is significantly better on them.
"""

from __future__ import annotations

import functools
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from memini_bench.report.collect import Inputs, Source, eligible, preference

#: A run with fewer questions is a smoke test: listed apart, never ranked.
MIN_QUESTIONS = 30
PRIMARY_K = 10
#: Readable names of data sets (``config.dataset``, holdout suffix removed), in the index's order; others (BEAM
#: tiers: ``BEAM 100K``) follow them.
TITLES = {"locomo": "LoCoMo turn", "locomo-sessions": "LoCoMo session",
          "longmemeval-shared": "LongMemEval session, shared haystack", "longmemeval-turns": "LongMemEval turn",
          "longmemeval": "LongMemEval session",
          "longmemeval-user-only-shared": "LongMemEval user-only sessions, shared haystack",
          "locomo-observations": "LoCoMo observations", "locomo-summaries": "LoCoMo summaries",
          "locomo-poisoned": "LoCoMo turn, poisoned"}
HOLDOUT_SUFFIXES = ("-held", "-tune")
#: What a board's data set (``config.dataset``) is as a published claim names it: (data set, protocol).
PROTOCOLS = {"locomo": ("locomo", "turn"), "locomo-sessions": ("locomo", "session"),
             "locomo-observations": ("locomo", "observations"), "locomo-summaries": ("locomo", "summaries"),
             "locomo-poisoned": ("locomo", "turn, poisoned"), "longmemeval": ("longmemeval", "session"),
             "longmemeval-turns": ("longmemeval", "turn"),
             "longmemeval-shared": ("longmemeval", "session, shared haystack"),
             "longmemeval-user-only-shared": ("longmemeval", "user-only sessions, shared haystack")}


def protocol_of(dataset: str) -> tuple[str, str]:
    """(data set, protocol) of a board's ``config.dataset``: ``PROTOCOLS``; a BEAM tier (``beam-100k``) is itself
    at ``message`` level (one item per chat message); any other name is itself at protocol ``default``."""
    if dataset in PROTOCOLS:
        return PROTOCOLS[dataset]
    return (dataset, "message" if dataset.startswith("beam-") else "default")


#: Identity fields that do not make two rows different systems.
#: Left out of a row's identity: the lineup and the split (a board is one split), and ``run``, which holds the whole
#: lineup's settings, the data file's sha256 and the K list (a board is one data file; files written before ``run``
#: existed must match files written after it when the system's own settings, the other keys, are the same).
NOT_IDENTITY = ("systems", "holdout", "run")
#: A system whose recipe changed under the same name: (name, the commit that changed it, the name the older
#: recipe goes by now). sqlite-vec-hybrid fetched each leg to memini's pool before; that is sqlite-vec-hybrid-pool.
RENAMED = (("sqlite-vec-hybrid", "cd9da97", "sqlite-vec-hybrid-pool"),)


@dataclass
class BoardRow:
    name: str
    system: str
    source: Source
    questions: int
    by_k: dict[int, dict[str, float]]
    #: per K, the results file's scores under their registered names (``recall_any@5``, ``mrr``, ``ndcg@10``)
    scores: dict[int, dict[str, float]] = field(default_factory=dict)
    ranked: bool = True
    note: str = ""
    mark: str = ""
    test: dict | None = None
    #: why the row is not tested against the leader ("" when it is, or when it leads)
    untested: str = ""

    def value(self, metric: str, k: int) -> float | None:
        return self.by_k.get(k, {}).get(metric)

    def score(self, name: str) -> float | None:
        """The row's value of the registered metric ``name`` (``recall_any@5``; ``mrr``: at any K) from its
        results file; None when the file does not hold it."""
        return score_of(self.scores, name)


@dataclass
class Board:
    key: str
    title: str
    dataset: str
    data: str
    split: str
    k: int
    embedder: str = ""
    #: the primary metric's registered name (``recall_any@10``, ``recall_any@5`` or ``mrr``: ``primary_metric``)
    metric: str = ""
    #: why that metric (the rule and this board's numbers), shown on the board
    metric_note: str = ""
    rows: list[BoardRow] = field(default_factory=list)
    apart: list[BoardRow] = field(default_factory=list)
    tuned: tuple[str, ...] = ()
    note: str = ""

    @property
    def primary(self) -> str:
        return self.metric or f"recall_any@{self.k}"

    @property
    def group(self) -> str:
        """The data set, protocol and split without the embedder: the overview's row of boards."""
        return "-".join(p for p in (self.dataset, self.data, self.split) if p)

    @property
    def questions(self) -> int:
        return max((r.questions for r in self.rows + self.apart), default=0)

    @property
    def leader(self) -> BoardRow | None:
        return self.rows[0] if self.rows else None

    @property
    def tied(self) -> list[BoardRow]:
        return [r for r in self.rows if r.mark == "tied"]

    @property
    def tested(self) -> list[BoardRow]:
        """The rows tested against the leader (tied, behind or ahead)."""
        return [r for r in self.rows if r.mark in ("tied", "behind", "ahead")]

    @property
    def untested_rows(self) -> list[BoardRow]:
        return [r for r in self.rows if r.mark == "untested"]

    @property
    def smoke(self) -> bool:
        """Every run on the board is a smoke test (under ``MIN_QUESTIONS`` questions)."""
        return all(r.questions < MIN_QUESTIONS for r in self.rows + self.apart)

    @property
    def slug(self) -> str:
        return "".join(c if c.isalnum() or c in "-." else "-" for c in self.key).strip("-") or "board"


def score_of(scores: dict[int, dict[str, float]], name: str) -> float | None:
    """The value of registered metric ``name`` in per-K score maps: at its own K, or (no cut-off, ``mrr``) at the
    first K that holds it."""
    from memini_bench.core.metrics import parse

    metric = parse(name, flag="metric")
    if metric.k is not None:
        return scores.get(metric.k, {}).get(metric.name)
    return next((v[metric.name] for _, v in sorted(scores.items()) if metric.name in v), None)


#: ``primary_metric``: recall_any@K is primary only at K <= the mean number of items a question searches divided
#: by this (a random order then finds a single gold item in the top K at most 1 / SATURATION of the time).
SATURATION = 4
#: The board order of embedders: MiniLM (the harness's default) first, then the others by name.
EMBEDDER_FIRST = "minilm"


def group_size(sources: list[Source]) -> tuple[float, int, int] | None:
    """(mean items a question searches, items, groups) of a board's data: ``config.items`` over the number of
    groups the questions fall in (one for a shared haystack; else the distinct ``group`` of the per-question
    records); None when neither is known."""
    for s in sources:
        items = s.results.config.get("items")
        if not isinstance(items, int) or isinstance(items, bool) or items <= 0:
            continue
        if s.results.config.get("shared_haystack") is True:
            return float(items), items, 1
        groups = {q.question.group for r in s.runs for q in r.questions}
        if s.runs and groups:
            return items / len(groups), items, len(groups)
    return None


def primary_metric(ks: list[int], size: tuple[float, int, int] | None) -> tuple[str, str]:
    """(registered name, why) of a board's primary metric: recall_any@K at K = PRIMARY_K, or else the largest K
    of the runs, among the Ks no larger than the mean items a question searches / SATURATION (no bound when that
    size is unknown); ``mrr`` when no K is that small (R@K would saturate: most systems find the gold item)."""
    if size is None:
        fit = list(ks)
        why = "the number of items a question searches is not known (no per-question records)"
    else:
        mean, items, groups = size
        fit = [k for k in ks if k <= mean / SATURATION]
        where = f"{items} items in one shared haystack" if groups == 1 else \
            f"{items} items in {groups} groups, {mean:.1f} per question on average"
        why = (f"a question searches {where}; recall_any@K is primary only at K <= {mean / SATURATION:.1f} (a "
               f"quarter of that: a random order finds a single gold item in the top K at most 25% of the time)")
    if not fit:
        return "mrr", why + "; no K of the runs is that small, so MRR ranks"
    k = PRIMARY_K if PRIMARY_K in fit else max(fit)
    return f"recall_any@{k}", why


def base_dataset(source: Source) -> str:
    name = source.dataset
    for suffix in HOLDOUT_SUFFIXES:
        if source.results.config.get("holdout") == suffix[1:] and name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def split_of(source: Source) -> str:
    """``held``, ``tune`` (a ``-holdout`` split) or ``full``."""
    holdout = source.results.config.get("holdout")
    return holdout if holdout in ("held", "tune") else "full"


def _data_stem(source: Source) -> str:
    data = str(source.results.config.get("data", ""))
    return Path(data).name.removesuffix(".json") if data else ""


def board_key(source: Source) -> tuple[str, str, str]:
    return base_dataset(source), _data_stem(source), split_of(source)


def title_of(dataset: str, stem: str) -> str:
    title = TITLES.get(dataset) or (f"BEAM {dataset[5:].upper()}" if dataset.startswith("beam-") else dataset)
    if dataset.startswith("longmemeval") and stem:
        title += f" ({stem.removeprefix('longmemeval_')})"
    return title


def identity_key(source: Source, system: str) -> str:
    ident = source.results.config.get("identity")
    if not isinstance(ident, dict):
        return f"file:{source.name}"
    kept = {k: v for k, v in ident.items() if k not in NOT_IDENTITY and (k != "reference" or system == "reference")}
    return orjson.dumps(kept, option=orjson.OPT_SORT_KEYS).decode()


@functools.lru_cache(maxsize=256)
def _commit_time(folder: str, commit: str) -> int:
    """The committer date (Unix seconds) of ``commit`` in the repository holding ``folder``; 0 when unknown."""
    if not commit or not all(c in "0123456789abcdef" for c in commit.lower()):
        return 0
    try:
        out = subprocess.run(["git", "-C", folder, "log", "-1", "--format=%ct", commit, "--"], capture_output=True,
                             text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return 0
    return int(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip().isdigit() else 0


def newness(source: Source) -> tuple[int, str]:
    """(the date of the commit the file records, its path): the larger is the newer run."""
    return _commit_time(_folder_of(source), str(source.results.config.get("git_commit", ""))), str(source.results.path)


def _flat(obj: object, prefix: str = "") -> dict[str, object]:
    if isinstance(obj, dict):
        out: dict[str, object] = {}
        for k, v in obj.items():
            out.update(_flat(v, k if not prefix or prefix in ("hybrid", "load", "mode_settings") else f"{prefix}.{k}"))
        return out
    return {prefix: obj}


def variant_tag(key: str, base: str) -> str:
    """The settings of identity ``key`` that differ from ``base``: ``reinforce``, ``temporal_boost 0.4``."""
    if key.startswith("file:") or base.startswith("file:"):
        return key.removeprefix("file:").removesuffix(".json")
    a, b = _flat(orjson.loads(key)), _flat(orjson.loads(base))
    parts = []
    for name in sorted(set(a) | set(b)):
        if a.get(name) != b.get(name):
            v = a.get(name)
            parts.append(name if v is True else f"{name} {v}")
    return ", ".join(parts) or "other settings"


def tuned_systems(sources: list[Source]) -> set[str]:
    """Systems whose settings were chosen on a data set: those its held runs' paired tests centre on."""
    out: set[str] = set()
    for s in sources:
        if split_of(s) != "held":
            continue
        centres = {r.get("system_a") for r in s.results.raw.get("significance") or [] if isinstance(r, dict)}
        out |= {c for c in centres if isinstance(c, str)} or set(s.results.systems[:1])
    return out


def _run_of(source: Source, system: str):
    return next((r for r in source.runs if r.system == system), None)


def _by_k(source: Source, system: str) -> dict[int, dict[str, float]]:
    from memini_bench.report.model import by_k

    return by_k([s for s in source.results.scores if s.system == system])


def _scores(source: Source, system: str) -> dict[int, dict[str, float]]:
    return {s.k: dict(s.scores) for s in source.results.scores if s.system == system}


def embedder_of(source: Source, system: str = "") -> str:
    """The embedder a run's vectors come from: its identity's ``embedder`` (else the config's); "" when none."""
    ident = source.results.config.get("identity")
    value = ident.get("embedder") if isinstance(ident, dict) else None
    value = value or source.results.config.get("embedder")
    return str(value) if value else ""


def embedder_order(embedder: str) -> tuple[int, str]:
    return (embedder != EMBEDDER_FIRST, embedder)


def build_boards(inputs: Inputs) -> list[Board]:
    """Every board of ``inputs`` (module docstring): one per data set, protocol, split and embedder, in the
    order of ``TITLES``, held before full, MiniLM first. A group with no scored row (a corrections run, scored by
    kind rather than by K) makes no board."""
    groups: dict[tuple[str, str, str, str], list[Source]] = {}
    for s in inputs.sources:
        groups.setdefault((*board_key(s), embedder_of(s)), []).append(s)
    tuned_on: dict[str, set[str]] = {}
    for (dataset, stem, _, _), sources in groups.items():
        tuned_on.setdefault(f"{dataset}|{stem}", set()).update(tuned_systems(sources))
    known = list(TITLES)
    splits = ("held", "full", "tune")
    order = sorted(groups, key=lambda key: (known.index(key[0]) if key[0] in known else len(known), key[0],
                                            key[1], splits.index(key[2]), embedder_order(key[3])))
    built = (_board(key, groups[key], tuned_on.get(f"{key[0]}|{key[1]}", set())) for key in order)
    return [b for b in built if b.rows or b.apart]


def _board(key: tuple[str, ...], sources: list[Source], tuned: set[str]) -> Board:
    dataset, stem, split, *rest = key
    embedder = rest[0] if rest else ""
    ks = sorted({sc.k for s in sources for sc in s.results.scores})
    metric, why = primary_metric(ks, group_size(sources))
    k = PRIMARY_K if PRIMARY_K in ks else (ks[-1] if ks else PRIMARY_K)
    board = Board(key="-".join(p for p in (dataset, stem, split, embedder) if p), title=title_of(dataset, stem),
                  dataset=dataset, data=stem, split=split, k=k, embedder=embedder, metric=metric, metric_note=why,
                  tuned=tuple(sorted(tuned)) if split == "held" else ())
    newest, files_per_key = _newest(sources, metric)
    idents_of: dict[str, list[str]] = {}
    for shown, ident in newest:
        idents_of.setdefault(shown, []).append(ident)
    rows = []
    for (shown, ident), (s, system) in newest.items():
        name = _row_name(shown, ident, idents_of[shown], files_per_key)
        questions = max((sc.questions for sc in s.results.scores if sc.system == system), default=0)
        rows.append(BoardRow(name=name, system=system, source=s, questions=questions, by_k=_by_k(s, system),
                             scores=_scores(s, system)))
    board_sha = _board_data(rows)
    for r in rows:
        sha = r.source.results.config.get("data_sha256") or ""
        if board_sha and sha and sha != board_sha:
            r.ranked, r.note = False, (f"a run of another data file (sha256 {sha[:12]}, this board's is "
                                       f"{board_sha[:12]}): not ranked beside runs it shares no questions with")
        elif r.questions < MIN_QUESTIONS:
            r.ranked, r.note = False, f"smoke test: {r.questions} question{'s' if r.questions != 1 else ''} " \
                                      f"(under {MIN_QUESTIONS}), not ranked"
        elif split == "full" and r.system in tuned:
            r.ranked, r.note = False, ("settings chosen on this data set's tune split; ranked on the held split "
                                       "board, where the questions it was tuned on are left out")
        elif r.score(metric) is None:
            r.ranked, r.note = False, f"no {metric} in its run"
    ranked = sorted((r for r in rows if r.ranked), key=lambda r: (not eligible(r.source, r.system),
                                                                   -(r.score(metric) or 0.0), r.name))
    board.rows, board.apart = ranked, sorted((r for r in rows if not r.ranked), key=lambda r: r.name)
    _mark(board)
    return board


def _row_name(shown: str, ident: str, idents: list[str], files_per_key: dict[str, int]) -> str:
    """A row's name: the system's, tagged with what its identity changes against the system's base identity on
    the board (the one most files hold; every row of a board has the same embedder)."""
    base = max(idents, key=lambda i: (files_per_key.get(i, 0), i))
    return shown if ident == base else f"{shown} [{variant_tag(ident, base)}]"


def _board_data(rows: list[BoardRow]) -> str:
    """The data file (sha256) of a board: the one most of its rows ran on (ties: the most questions), "" when no
    row records one. A run of another file is listed apart, never ranked (its numbers are over other questions)."""
    shas = [(r.source.results.config.get("data_sha256") or "", r.questions) for r in rows]
    counts: dict[str, list[int]] = {}
    for sha, questions in shas:
        if sha:
            counts.setdefault(sha, []).append(questions)
    if not counts:
        return ""
    return max(counts, key=lambda sha: (len(counts[sha]), max(counts[sha]), sha))


def _has(source: Source, system: str, metric: str) -> bool:
    return score_of(_scores(source, system), metric) is not None


def _newest(sources: list[Source], metric: str = "") -> tuple[dict[tuple[str, str], tuple[Source, str]],
                                                               dict[str, int]]:
    """(shown name, identity) -> (the source the row reads, and the system's name in it): of the files holding
    that run, those with ``metric`` for the system first (a later run at other Ks never hides the run the board
    ranks by), then those with per-question records for it (so the row can be tested), then the newest; and how
    many files hold each identity."""
    newest: dict[tuple[str, str], tuple[tuple[bool, bool, object], Source, str]] = {}
    files_per_key: dict[str, int] = {}
    for s in sources:
        for key_ in {identity_key(s, system) for system in s.results.systems}:
            files_per_key[key_] = files_per_key.get(key_, 0) + 1
        for system in s.results.systems:
            slot = (shown_name(s, system), identity_key(s, system))
            rank = (not metric or _has(s, system, metric), *preference(s, system, newness(s)))
            if slot not in newest or rank >= newest[slot][0]:
                newest[slot] = (rank, s, system)
    return {slot: (s, system) for slot, (_, s, system) in newest.items()}, files_per_key


def shown_name(source: Source, system: str) -> str:
    """``system``, or the name its recipe goes by now where the file predates a change of that system's recipe
    under the same name (``RENAMED``; only when the commits' dates are known)."""
    for name, commit, older in RENAMED:
        if system == name:
            made, changed = newness(source)[0], _commit_time(_folder_of(source), commit)
            if made and changed and made < changed:
                return older
    return system


def _folder_of(source: Source) -> str:
    return str(source.results.path.resolve().parent) if source.results.path.parent.is_dir() else "."


def _mark(board: Board) -> None:
    """Each ranked row against the leader on the primary metric (McNemar for recall_any@K, the paired bootstrap
    for MRR; Holm across the board): module docstring."""
    from memini_bench.core.metrics import parse
    from memini_bench.evaluation.stats import adjust, compare

    if not board.rows:
        return
    leader = board.rows[0]
    leader.mark = "best"
    metric = parse(board.primary, flag="metric")
    binary = metric.family == "recall_any"
    lead_run = _run_of(leader.source, leader.system)
    tests, tested = [], []
    for row in board.rows[1:]:
        run = _run_of(row.source, row.system)
        if lead_run is None or run is None:
            row.mark = "untested"
            whose = [n for n, r in ((f"the leader ({leader.name})", lead_run), ("this row", run)) if r is None]
            row.untested = f"no per-question records for {' or '.join(whose)}"
            continue
        mine = {q.question.id: q for q in run.questions}
        common = [q for q in lead_run.questions if q.question.id in mine]
        if len(common) < MIN_QUESTIONS:
            row.mark = "untested"
            row.untested = f"{len(common)} questions in common with the leader (under {MIN_QUESTIONS})"
            continue
        a = [metric.per_question(q) for q in common]
        b = [metric.per_question(mine[q.question.id]) for q in common]
        tests.append(compare(leader.name, row.name, board.primary, a, b, binary=binary))
        tested.append(row)
    for row, test in zip(tested, adjust(tests), strict=True):
        row.test = {"delta": -test.delta, "p": test.p, "p_adjusted": test.p_adjusted, "questions": test.questions,
                    "only_leader": test.only_a, "only_row": test.only_b, "significant": test.significant,
                    "test": test.test}
        row.mark = ("behind" if test.delta > 0 else "ahead") if test.significant else "tied"


def newest_runs(sources: list[Source]):
    """A ``keep(source, run)`` test true for one run per (system, identity) of ``sources``: the newest file's, as on
    the boards (two files holding the same run show it once in the receipts)."""
    best: dict[tuple[str, str], tuple[tuple[int, str], int]] = {}
    for s in sources:
        for r in s.runs:
            key = (shown_name(s, r.system), identity_key(s, r.system))
            if key not in best or newness(s) >= best[key][0]:
                best[key] = (newness(s), s.index)
    return lambda s, r: best.get((shown_name(s, r.system), identity_key(s, r.system)), (None, None))[1] == s.index
