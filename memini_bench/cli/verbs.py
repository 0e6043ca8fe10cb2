"""The verbs as click commands, each with only its own flags: those its mode honours (``modes.used_fields``: the
options and ``uses`` of its ``modes.specs.ModeSpec``), less the ones the verb itself stands for (``implied``: ``qa``
is ``-qa``). Each flag keeps both spellings (``-suite``, ``--suite``); ``--plan`` prints what would run and runs
nothing. A command is built from the mode's spec alone: the mode's module is imported when the verb runs.
"""

from __future__ import annotations

import sys

import click
from click.core import ParameterSource

from memini_bench.cli.help import GroupedCommand, Topic, show_all, topics
from memini_bench.core.settings import HELP_SETTINGS, click_options, flag_fields
from memini_bench.modes import STUDIES, dispatch, mode_for, mode_option_classes, used_fields
from memini_bench.modes.options import RunOptions
from memini_bench.modes.specs import ModeSpec, spec_for

#: Each verb's help examples.
EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "run": (("the offline sample, memini's three systems", "memini-bench run -suite sample"),
            ("LoCoMo at K 5 and 10 with your system", "memini-bench run -suite locomo -data locomo10.json -k 5,10 "
             "-system ./mine.py:make"),
            ("paired tests against the hybrid", "memini-bench run -suite sample -systems hybrid,bm25s -significance")),
    "sweep": (("fusion weights chosen on tune, reported on held", "memini-bench sweep -suite locomo -data "
               "locomo10.json -holdout tune -sweep 'fusion=0.3,0.5,-1' -select mrr"),),
    "compare": (("two runs' per-question files", "memini-bench compare -compare a.jsonl,b.jsonl"),),
    "qa": (("QA accuracy on 20 questions", "memini-bench qa -suite locomo -data locomo10.json -limit 20"),),
    "vetobench": (("veto recall", "memini-bench vetobench -data vetobench/"),),
    "list": (("the systems only", "memini-bench list systems"),),
}
PLAN = click.Option(["-plan", "--plan"], is_flag=True, help="Print what would run (systems, questions, texts to "
                    "embed and how many are cached, where it would write) and run nothing.")
VERSION = click.Option(["-version", "--version"], is_flag=True, expose_value=False, is_eager=True,
                       callback=lambda ctx, _param, value: _version(ctx, value), help="Show the version and exit.")
HELP_ALL = click.Option(["--help-all"], is_flag=True, expose_value=False, is_eager=True, callback=show_all,
                        help="Every flag of this verb, grouped.")


def _version(ctx: click.Context, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        from memini_bench import __version__

        click.echo(f"memini-bench, version {__version__}")
        ctx.exit()


def verb_params(spec: ModeSpec) -> list[click.Parameter]:
    """The click options of the flags the mode of ``spec`` honours, less the ones its verb stands for."""
    wanted = used_fields(spec) - set(spec.implied) - spec.unused
    params = []
    for cls in RunOptions.concern_classes() + mode_option_classes():
        for f, decorate in zip(flag_fields(cls), click_options(cls), strict=True):
            if f.name in wanted:
                params += decorate(click.Command("x")).params
    return params


#: A verb's help stays within this many lines (``VerbCommand``).
HELP_LINES = 60


class VerbCommand(GroupedCommand):
    """A verb's command: its help prints in full the most topics of ``fits`` (tried in order) that keep it within
    ``HELP_LINES`` lines; the others get one line each."""

    fits: tuple[tuple[str, ...], ...] = ()

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if not getattr(ctx, "help_all", False):
            for full in self.fits:
                self.full = full
                trial = ctx.make_formatter()
                super().format_help(ctx, trial)
                if trial.getvalue().count("\n") <= HELP_LINES:
                    break
        super().format_help(ctx, formatter)


def verb_topics(spec: ModeSpec, params: list[click.Parameter]) -> list[Topic]:
    """The verb's help topics: the concerns' (``cli.help.topics``) and one of its own, titled ``Flags of NAME``,
    that also holds the flags it reads from another mode's options (``run`` reads ``-reference``)."""
    listed = topics(RunOptions.concern_classes(), [spec])
    own = spec.topic
    placed = {name for t in listed for name in t.params}
    strays = tuple(p.name for p in params if isinstance(p, click.Option) and p.name not in placed
                   and p.name not in ("plan", "help_all"))
    mine = next((t for t in listed if t.name == own), Topic(own, "", ()))
    mine = Topic(own, f"Flags of {spec.name}", mine.params + strays)
    return [t for t in listed if t.name != own] + [mine]


def given_names(values: dict) -> frozenset[str]:
    ctx = click.get_current_context()
    return frozenset(n for n in values
                     if ctx.get_parameter_source(n) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP))


def run_verb(verb: str, mode, values: dict) -> None:
    """Build the options as the flat form does (the verb's implied flags set), check that they route to ``verb``
    (``modes.routes.check_verb``), then dispatch."""
    from memini_bench.modes.routes import check_verb

    plan_only = bool(values.pop("plan", False))
    given = given_names(values)
    opts = RunOptions.build({**values, **mode.spec.implied}, given)
    check_verb(verb, opts)
    sys.exit(dispatch(opts, verb, plan_only=plan_only, mode=mode))


def verb_command(verb: str) -> click.Command:
    """``memini-bench VERB``: the verb's own flags (``verb_params``), grouped help, ``--plan``; the mode itself
    (``modes.mode_for``) is made when the command runs."""
    spec = spec_for(verb)
    extra: list[click.Parameter] = []
    if verb == "list":
        extra.append(click.Argument(["topics"], nargs=-1))

    def callback(**values: object) -> None:
        if verb == "list":
            from memini_bench.modes.listing import ListMode

            run_verb(verb, ListMode(values.pop("topics")), values)
        run_verb(verb, mode_for(verb), values)

    summary = spec.summary
    if verb == "list":
        from memini_bench.modes.listing import TOPICS

        summary += f" (TOPICS: any of {', '.join(TOPICS)}; none: all)"
    cmd = VerbCommand(verb, callback=callback, params=[*extra, *verb_params(spec), PLAN, HELP_ALL, VERSION],
                      help=f"memini-bench {verb}: {summary}.", context_settings=HELP_SETTINGS)
    cmd.topic_list = verb_topics(spec, cmd.params)
    own = spec.topic
    cmd.fits = (("core", own, "systems", "outputs"), ("core", own, "systems"), ("core", own), (own,))
    cmd.examples = EXAMPLES.get(verb, ())
    cmd.other = (("--plan", "Print what would run and where it would write; run nothing."),
                 ("-h, --help / --help-all", "This help / every flag of this verb, grouped."))
    return cmd


#: The stand-alone study scripts, each a click command (``module:attr``), imported when named.
SCRIPTS: dict[str, str] = {
    "contradiction": "memini_bench.studies.contradiction:contradiction_command",
    "entity-eval": "memini_bench.studies.entity_eval:entity_eval_command",
}


def study_names() -> list[str]:
    return [*STUDIES, *SCRIPTS]


def study_help() -> str:
    """``memini-bench study --help``: every study, one line each."""
    lines = ["Usage: memini-bench study NAME [FLAGS]   (memini-bench study NAME --help: its flags)", "",
             "  memini's studies:", ""]
    for name in STUDIES:
        lines.append(f"    {name:<15} {spec_for(f'study {name}').summary}")
    for name, target in SCRIPTS.items():
        lines.append(f"    {name:<15} the {name} study script ({target.split(':')[0]})")
    return "\n".join(lines) + "\n"
