"""``-compare A.jsonl[,B.jsonl]``: paired significance of runs read back from ``-per-question`` files (like ranx's
``compare``), without re-running anything.

One file: its ``-reference`` system (default memini-hybrid) against each other system in it. Two files: each system
both files hold (or ``-compare-systems``) in A against the same system in B, e.g. a run with ``-fusion -1``
against the default. Tests (``memini_bench.evaluation.significance``): exact McNemar on recall_any@K, a paired bootstrap
interval on MRR and nDCG@K, Holm across the family; questions are paired by id. Prints the table; with ``-out``
writes ``<out>/compare-<A>[-vs-<B>].json`` (its hashed name when that file holds another comparison:
``results.identity.claim``). A results JSON holds per-system scores only: a paired test needs the
per-question files.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from memini_bench.errors import BenchError
from memini_bench.modes.base import Mode, Outcome, Plan
from memini_bench.modes.common import mode_identity, shared_parts, write_results
from memini_bench.modes.options import RunOptions
from memini_bench.modes.specs import SignificanceOptions, SystemsRunOptions
from memini_bench.results.identity import safe_name
from memini_bench.results.provenance import harness, input_sha256
from memini_bench.results.schema import CompareFilesResults
from memini_bench.results.write import check_destinations


class CompareMode(Mode):
    """``memini-bench compare`` (see the module docstring): ``plan`` checks the flags and claims the output path
    (hashing the files only when it writes); ``run`` reads the files and tests; ``render`` prints the table;
    ``write`` the comparison file."""

    verb = "compare"

    def plan(self, opts: RunOptions) -> Plan:
        s = opts.mode(SignificanceOptions)
        if len(s.compare) == 1 and s.compare_systems:
            raise BenchError("-compare-systems: pairs systems of two files; give -compare A.jsonl,B.jsonl")
        if "protocol" in opts.given:
            raise BenchError("-protocol: not used by -compare (a per-question file holds one protocol's run); drop it")
        if len(s.compare) == 2 and "reference" in opts.given:
            raise BenchError("-reference: names the baseline within one file; with two files each system is paired "
                             "with itself (use -compare-systems)")
        pairs = (f"{s.reference or 'memini-hybrid'} against each other system of {s.compare[0]}" if len(s.compare) == 1
                 else f"each system of {s.compare[0]} against itself in {s.compare[1]}")
        plan = Plan(self.verb, opts, notes=[f"paired tests: {pairs}, K {','.join(map(str, opts.k))}"],
                    reads_data=False)
        if not opts.output.no_write:
            check_destinations(folders=[("-out", opts.output.out)])
            stem = "-vs-".join(safe_name(Path(p).stem) for p in s.compare)
            plan.claim(Path(opts.output.out) / f"compare-{stem}.json", compare_identity(opts))
        return plan

    def run(self, plan: Plan) -> Outcome:
        from memini_bench.evaluation.significance import compare_file_systems, compare_files, markdown

        opts = plan.opts
        s, c = opts.mode(SignificanceOptions), opts.mode(SystemsRunOptions)
        if len(s.compare) == 1:
            reference = s.reference or "memini-hybrid"
            sig = compare_file_systems(s.compare[0], opts.k, reference=reference, resamples=c.resamples, seed=c.seed)
            title = f"{Path(s.compare[0]).name}: {reference} against each system"
        else:
            sig = compare_files(*s.compare, opts.k, systems=s.compare_systems, resamples=c.resamples, seed=c.seed)
            title = f"{Path(s.compare[0]).name} vs {Path(s.compare[1]).name}"
        return Outcome(plan, 0, markdown(sig, title), sig.rows)

    def write(self, outcome: Outcome) -> None:
        opts = outcome.plan.opts
        s = opts.mode(SignificanceOptions)
        for out, ident in outcome.plan.claims.items():
            write_results(out, CompareFilesResults(
                config={"mode": "compare-files", "files": list(s.compare),
                        **shared_parts(opts, "ks"), "reference": _reference(opts), **shared_parts(opts, "bootstrap"),
                        "identity": ident, **harness()},
                extra={"results": [dataclasses.asdict(r) for r in outcome.result]}))


def _reference(opts: RunOptions) -> str:
    s = opts.mode(SignificanceOptions)
    return s.reference if len(s.compare) == 1 else ""


def compare_identity(opts: RunOptions) -> dict:
    """What changes the comparison's numbers (``modes.common.mode_identity``): each file's sha256 (a FIFO or other
    special file, read once by the comparison, is named instead), the K list, the reference, the paired systems,
    the bootstrap's settings."""
    s = opts.mode(SignificanceOptions)
    return mode_identity(opts, "compare-files", {
        "files": [input_sha256(p) or f"not a regular file: {p}" for p in s.compare], "reference": _reference(opts),
        "systems": list(s.compare_systems)}, shared=("ks", "bootstrap"))
