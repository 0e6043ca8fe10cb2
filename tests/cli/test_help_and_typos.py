"""Help a newcomer can follow and typos that name the fix: every ``help TOPIC`` the help lists answers; every verb
(subcommands and a group's commands included) names the closest flag of a Go-style typo instead of click's "No such
option '-m'"; a mistyped verb, study or ``data`` command names the closest one; ``-kk 5`` is not ``-k k``."""

from __future__ import annotations

import re

import click
import pytest
from cli_run import run_cli

from memini_bench.cli import SUBCOMMANDS, _command_of, _subcommand, flat_command
from memini_bench.cli.verbs import SCRIPTS, study_names
from memini_bench.modes import STUDIES, VERBS


def _listed_topics(capsys) -> list[str]:
    """Every TOPIC the help offers: each verb of ``--help``'s Verbs section, and every topic ``--help-all`` and
    an unknown topic's message list."""
    code, out, _ = run_cli(["--help"], capsys)
    assert code == 0
    verbs = out.split("Verbs:\n", 1)[1].split("\n\n", 1)[0]
    names = [line.split()[0] for line in verbs.splitlines() if line.strip()]
    assert {"score", "report", "data", "run", "help"} <= set(names)
    code, _, err = run_cli(["help", "no-such-topic"], capsys)
    assert code == 2 and "unknown topic; use one of" in err
    listed = err.split("use one of", 1)[1].split("(see")[0]
    return names + [t.strip() for t in listed.split(",")]


def test_every_help_topic_the_help_lists_answers(capsys):
    topics = _listed_topics(capsys)
    assert {t.name for t in flat_command().topic_list} <= set(topics)
    for topic in topics:
        code, out, err = run_cli(["help", topic], capsys)
        assert code == 0 and out.strip() and not err, (topic, err)
    assert "-qrels" in run_cli(["help", "score"], capsys)[1]
    assert "-format" in run_cli(["help", "report"], capsys)[1]


def _commands() -> list[tuple[list[str], click.Command]]:
    """Every command a user types a flag to: each verb, each subcommand (a group's commands each), each study."""
    out: list[tuple[list[str], click.Command]] = [([verb], _command_of(verb)) for verb in VERBS]
    for name in SUBCOMMANDS:
        if name == "help":
            continue
        cmd = _subcommand(name)
        if isinstance(cmd, click.Group):
            out += [([name, sub], c) for sub, c in cmd.commands.items()]
        else:
            out.append(([name], cmd))
    from memini_bench.cli.verbs import verb_command
    from memini_bench.core.registry import load_target

    out += [(["study", s], verb_command(f"study {s}")) for s in STUDIES]
    out += [(["study", s], load_target(target, s)) for s, target in SCRIPTS.items()]
    return out


def _flags(cmd: click.Command) -> list[str]:
    return sorted({o for p in cmd.params if isinstance(p, click.Option) for o in p.opts
                   if o.startswith("-") and not o.startswith("--")}, key=len)


@pytest.mark.parametrize("path, cmd", _commands(), ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_every_verb_names_the_closest_flag_of_a_go_style_typo(tmp_path, capsys, path, cmd):
    flags = [f for f in _flags(cmd) if len(f) >= 5] or ["--help"]  # data list has only -v: its --help then
    flag = flags[-1]
    typo = flag + flag[-1]                   # -qrels -> -qrelss
    code, out, err = run_cli([*path, typo, "x"], capsys)
    assert code == 2 and not out and err.strip() == f"memini-bench: error: no such flag {typo}; did you mean {flag}?"
    code, _, err = run_cli([*path, "-m", "x"], capsys)  # no close flag: still not click's "No such option"
    assert code == 2 and "No such option" not in err and "no such flag -m" in err and len(err.splitlines()) == 1
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("args, message", [
    (["score", "-qrelz", "x"], "no such flag -qrelz; did you mean -qrels?"),
    (["report", "-formt", "md", "x.json"], "no such flag -formt; did you mean -format?"),
    (["run", "-kk", "5"], "no such flag -kk; did you mean -k? (its value goes after a space: -k VALUE)"),
    (["-kk", "5", "-suite", "sample"], "no such flag -kk; did you mean -k? (its value goes after a space: -k VALUE)"),
    (["runn", "-suite", "sample"], "runn: no such verb; did you mean memini-bench run? use one of"),
    (["sweeep"], "sweeep: no such verb; did you mean memini-bench sweep?"),
    (["data", "lst"], "data lst: no such command; did you mean data list? use one of list, fetch, verify"),
    (["data"], "data: give a command, one of list, fetch, verify"),
    (["data", "-x", "list"], "no such flag -x (see --help)"),
    (["study", "rerankk"], "study rerankk: no such study; did you mean rerank?"),
])
def test_mistyped_verbs_commands_and_joined_values(tmp_path, capsys, args, message):
    code, out, err = run_cli(args, capsys)
    assert code == 2 and not out and err.startswith(f"memini-bench: error: {message}"), err
    assert len(err.strip().splitlines()) == 1


def test_a_joined_numeric_value_still_reads_as_click_does(tmp_path, capsys):
    code, out, _ = run_cli(["run", "-suite", "sample", "-embedder", "hash", "-k5", "--plan"], capsys)
    assert code == 0 and re.search(r"\bK 5\b", out)
    assert set(study_names()) >= set(STUDIES)
