"""docs/flags.md is the CLI's flags, verb by verb: every verb and study has its section, each section lists exactly
the flags that verb's command takes (read from the click command, the oracle here), under the headings of its
--help, and a flag changed in the code makes the page stale (the docs test fails until it is regenerated)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import click

from docgen import flags, table
from memini_bench.core.settings import setting

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "flags.md"


def _sections(text: str) -> dict[str, str]:
    """Heading text (``memini-bench run``) -> the section's text, for every ``###`` and ``####`` heading."""
    parts = re.split(r"^#{3,4} (memini-bench [^\n]+)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _flags_in(section: str) -> set[str]:
    return {m.group(1) for m in re.finditer(r"^\| `(-[^`]+)`", section, re.M)}


def test_every_verb_and_study_has_a_section_with_exactly_its_flags():
    from memini_bench.cli.verbs import verb_command
    from memini_bench.modes import all_verbs

    sections = _sections(PAGE.read_text())
    for verb in all_verbs():
        cmd = verb_command(verb)
        wanted = {min(p.opts, key=len) for p in cmd.params if isinstance(p, click.Option) and not p.hidden}
        assert _flags_in(sections[f"memini-bench {verb}"]) == wanted, verb
        for topic in cmd.topic_list:                     # its --help headings
            if cmd.params_of(topic):
                assert f"**{topic.title}**" in sections[f"memini-bench {verb}"], (verb, topic.title)
    for name in ("study contradiction", "study entity-eval", "report", "data list", "data fetch", "score"):
        assert _flags_in(sections[f"memini-bench {name}"]), name


def test_the_flat_forms_table_is_the_routes():
    from memini_bench.modes.routes import FLAT_ROUTES

    text = PAGE.read_text()
    for route in FLAT_ROUTES:
        assert f"| `{route.flags}` | `{route.verb}` |" in text


def test_a_flag_changed_in_the_code_makes_the_page_stale(monkeypatch):
    """A new flag of the sweep: the generated reference gains it under ``memini-bench sweep`` only, and the page
    on disk is out of date."""
    from memini_bench.modes import specs

    @dataclasses.dataclass(frozen=True)
    class Widened(specs.SweepOptions):
        sweep_extra: int = setting("sweep-extra", 3, "A flag the page does not know yet.")

    monkeypatch.setattr(specs, "SPECS", tuple(dataclasses.replace(s, options=Widened) if s.verb == "sweep" else s
                                              for s in specs.SPECS))
    sections = _sections(flags.reference())
    assert "-sweep-extra" in _flags_in(sections["memini-bench sweep"])
    assert "-sweep-extra" not in _flags_in(sections["memini-bench run"])
    old = PAGE.read_text()
    new = table.rendered(old, ROOT / "results", str(PAGE))
    assert old != new and "| `-sweep-extra`, `--sweep-extra` | integer | `3` |" in new


def test_no_default_names_this_checkout():
    assert str(ROOT) not in PAGE.read_text()
