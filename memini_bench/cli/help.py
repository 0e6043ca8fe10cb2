"""Help a person can use: ``memini-bench --help`` lists the verbs and the flat form's mapping onto them; each
verb's ``--help`` shows only its own flags, grouped under headings, with examples; ``--help-all`` prints every flag
of the flat form and ``memini-bench help TOPIC`` one topic.

Every flag belongs to a *topic*: its setting's ``group`` (``core.settings.group_of``: the field's own, else its
options class's ``GROUP``), or, for a mode's own flags, the mode's topic (``modes.specs.ModeSpec.topic``: ``sweep``,
``rerank-tier``, ``run``). A verb's help prints its everyday topics in full
(``FULL`` and the verb's own), one line per other topic (its title, its flags' names and how to see them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import click

from memini_bench.core.settings import flag_fields, group_of

#: Topics of the concern options, in --help order, with their titles.
CONCERN_TOPICS = {"core": "Core", "data": "Data and its preparation", "systems": "Systems",
                  "outputs": "Outputs", "hybrid": "memini's hybrid (memini-hybrid and its store)",
                  "embedding": "Embedding and the cache", "execution": "Where the work runs",
                  "reference": "The reference system (-systems reference)",
                  "checks": "Run checks (what a recall must return, plugin failures, progress)"}
#: The topics --help shows in full; the rest get one line each.
FULL = ("core", "data", "systems", "outputs")
EXAMPLES = (
    ("the offline sample, memini's three systems", "memini-bench run -suite sample"),
    ("LoCoMo turn level at K 5 and 10", "memini-bench -suite locomo -data locomo10.json -k 5,10"),
    ("your own system beside memini's", "memini-bench -suite locomo -data locomo10.json -system ./mine.py:make"),
    ("peers with paired significance", "memini-bench -suite locomo -data locomo10.json -systems hybrid,bm25s "
     "-significance"),
    ("a sweep chosen on tune, reported on held", "memini-bench -suite locomo -data locomo10.json -holdout tune "
     "-sweep 'fusion=0.3,0.5,-1' -select mrr"),
    ("every system, suite and embedder", "memini-bench -list"),
)


@dataclasses.dataclass(frozen=True)
class Topic:
    name: str
    title: str
    params: tuple[str, ...]  # click parameter names, in declaration order


def topics(concerns: Iterable[type], mode_specs: Iterable) -> list[Topic]:
    """Every topic with its flags: the concerns' (by group) then each mode's own (``modes.specs.ModeSpec``)."""
    by_group: dict[str, list[str]] = {name: [] for name in CONCERN_TOPICS}
    for cls in concerns:
        for f in flag_fields(cls):
            by_group.setdefault(group_of(cls, f), []).append(f.name)
    out = [Topic(name, CONCERN_TOPICS.get(name, name), tuple(params)) for name, params in by_group.items() if params]
    for spec in mode_specs:
        if spec.options is not None:
            out.append(Topic(spec.topic, spec.summary, tuple(f.name for f in flag_fields(spec.options))))
    return out


class GroupedCommand(click.Command):
    """A click command whose help is grouped by topic (see the module docstring): the examples, the topics of
    ``full`` in full, one line per other topic, then the ``other`` rows."""

    topic_list: list[Topic] = []
    full: tuple[str, ...] = FULL
    examples: tuple[tuple[str, str], ...] = EXAMPLES
    other: tuple[tuple[str, str], ...] = (("-version, --version", "Show the version and exit."),
                                          ("-h, --help / --help-all", "This help / every flag, grouped."))

    def params_of(self, topic: Topic) -> list[click.Parameter]:
        by_name = {p.name: p for p in self.params}
        return [by_name[n] for n in topic.params if n in by_name]

    def _write_topic(self, ctx: click.Context, formatter: click.HelpFormatter, topic: Topic) -> None:
        rows = [row for p in self.params_of(topic) if (row := p.get_help_record(ctx)) is not None]
        if not rows:
            return
        with formatter.section(topic.title):
            formatter.write_dl(rows)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        if self.examples:
            with formatter.section("Examples"):
                for what, line in self.examples:
                    formatter.write(f"{'':{formatter.current_indent}}# {what}\n"
                                    f"{'':{formatter.current_indent}}{line}\n")
        full = getattr(ctx, "help_all", False)
        for topic in self.topic_list:
            if full or topic.name in self.full:
                self._write_topic(ctx, formatter, topic)
        rest = [t for t in self.topic_list if t.name not in self.full and self.params_of(t)]
        if rest and not full:
            with formatter.section("More (memini-bench help TOPIC shows one; --help-all shows all)"):
                formatter.write_dl([(t.name, f"{t.title}: {_flag_names(self.params_of(t))}") for t in rest])
        with formatter.section("Other"):
            formatter.write_dl(list(self.other))

    def topic_help(self, ctx: click.Context, name: str) -> str:
        topic = next((t for t in self.topic_list if t.name == name), None)
        if topic is None:
            raise click.UsageError(f"help {name!r}: unknown topic; use one of "
                                   f"{', '.join(t.name for t in self.topic_list)}")
        formatter = ctx.make_formatter()
        self._write_topic(ctx, formatter, topic)
        return formatter.getvalue()


def _flag_names(params: list[click.Parameter], most: int = 4) -> str:
    names = [p.opts[0] for p in params if isinstance(p, click.Option)]
    return ", ".join(names[:most]) + (f", ... {len(names)} flags" if len(names) > most else "")


def show_all(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """``--help-all``: the whole help, every topic in full."""
    if not value or ctx.resilient_parsing:
        return
    ctx.help_all = True  # type: ignore[attr-defined]
    click.echo(ctx.get_help(), color=ctx.color)
    ctx.exit()


#: One line per verb, for ``memini-bench --help``.
VERB_LINES = (
    ("run", "the normal run: systems on a suite, one table, a results file"),
    ("sweep", "a grid over a system's settings, chosen on tune, reported on held"),
    ("compare", "paired significance of runs read back from -per-question files"),
    ("qa", "end-to-end QA accuracy with an LLM reader and judge"),
    ("study NAME", "memini's studies (memini-bench study --help lists them)"),
    ("vetobench", "veto recall on VetoBench, its scale curve and the live agent layer"),
    ("score", "score saved rankings or answers (memini-bench score --help)"),
    ("report", "a static site or one table from results files"),
    ("data", "the data sets: list, fetch, check"),
    ("list [TOPIC]", "every registered system, suite, embedder and executor"),
    ("help [TOPIC]", "one help topic, or one verb's help"),
)
VERB_EXAMPLES = (
    ("the offline sample, memini's three systems", "memini-bench run -suite sample"),
    ("your own system beside memini's", "memini-bench run -suite locomo -data locomo10.json -system ./mine.py:make"),
    ("what a run would do, without doing it", "memini-bench run -suite locomo -data locomo10.json --plan"),
    ("the flat form of memini's cmd/bench (= run)", "memini-bench -suite locomo -data locomo10.json -k 5,10"),
)


class FlatCommand(GroupedCommand):
    """The flat, Go-style command (every flag; no verb): ``--help`` is the overview of the verbs and of the flat
    form's mapping onto them (``modes.routes.FLAT_ROUTES``); ``--help-all`` every flag, grouped."""

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if getattr(ctx, "help_all", False):
            super().format_help(ctx, formatter)
            return
        from memini_bench.modes.routes import FLAT_ROUTES

        formatter.write("Usage: memini-bench VERB [FLAGS]    (memini-bench VERB --help: that verb's flags)\n"
                        "       memini-bench [FLAGS]         (the flat form of memini's cmd/bench)\n")
        self.format_help_text(ctx, formatter)
        with formatter.section("Verbs"):
            formatter.write_dl(list(VERB_LINES))
        with formatter.section("Examples"):
            for what, line in VERB_EXAMPLES:
                formatter.write(f"{'':{formatter.current_indent}}# {what}\n{'':{formatter.current_indent}}{line}\n")
        with formatter.section("The flat form: the first row whose flags are given picks the verb"):
            formatter.write_dl([(r.flags, r.verb) for r in FLAT_ROUTES])
        with formatter.section("Other"):
            formatter.write_dl([("-version, --version", "Show the version and exit."),
                                ("--help-all", "Every flag of the flat form, grouped by topic."),
                                ("--plan", "Print what would run and where it would write; run nothing.")])
