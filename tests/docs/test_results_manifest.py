"""cmd/results_manifest.txt declares every committed results file once: each file or folder in results/ (but what
make results keeps: results/bench/, results/reference/, BEAM's runs) is named by exactly one line, every named
path is committed, and each line's command parses with its program's own options and writes only under results/."""

from __future__ import annotations

import fnmatch
import subprocess
import sys
from pathlib import Path

import docexamples as examples
from docgen import manifest

ROOT = Path(__file__).resolve().parents[2]


def _committed_results() -> set[str]:
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "results"], capture_output=True, text=True,
                         check=True).stdout.split()
    tops = set()
    for path in out:
        parts = path.split("/")
        if any(fnmatch.fnmatch(parts[1], k) for k in manifest.KEPT):
            continue
        tops.add("/".join(parts[:2]))
    return tops


def test_every_committed_results_file_has_exactly_one_line():
    _, entries = manifest.read()
    named = [p for e in entries for p in e.paths]
    assert len(named) == len(set(named)), sorted(p for p in named if named.count(p) > 1)
    assert set(named) == _committed_results()


def test_every_command_writes_under_results_only():
    for entry, words in manifest.commands():
        where = examples.destinations(examples.Example("cmd/results_manifest.txt", 0, tuple(words)), ROOT)
        paths = [p for what, p in where if "cache" not in what]
        assert paths, entry
        assert all(p.startswith("results") for p in paths), (entry, where)


def test_make_results_runs_the_manifest():
    (line,) = examples.make_commands("results", ())
    assert line[:2] == ["python", "cmd/make_results.py"]
    listed = subprocess.run([sys.executable, "-c", "import sys; sys.path[:0] = ['cmd', '.']; "
                             "from docgen.manifest import main; main(['--list', 'LOCOMO=X'])"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(listed) == len(manifest.read()[1])
    assert "-data X -k 5,10 -significance" in listed[0]


def test_a_bad_argument_is_one_line_and_touches_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(manifest, "ROOT", tmp_path)  # were the check to fail, only this folder could be emptied
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "kept.json").write_text("{}")
    assert manifest.main(["--lsit"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("make_results: error: --lsit: ")
    assert manifest.main(["--help"]) == 0 and "--list" in capsys.readouterr().out
    assert (tmp_path / "results" / "kept.json").is_file()


def test_system_runs_only_the_commands_naming_it_and_empties_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(manifest, "ROOT", tmp_path)
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "kept.json").write_text("{}")
    first = next(e.paths[0] for e, words in manifest.commands() if "taosmd" in manifest.systems_of(words))
    (tmp_path / first).write_text("{}")  # the old run of the first command: removed, so it is not kept beside
    ran = []
    monkeypatch.setattr(manifest.subprocess, "run", lambda argv, cwd: ran.append(argv) or
                        subprocess.CompletedProcess(argv, 1))  # the first command "fails": nothing more runs
    assert manifest.main(["--system", "taosmd"]) == 1
    capsys.readouterr()
    (argv,) = ran
    assert "taosmd" in argv[argv.index("-systems") + 1].split(",")
    assert not (tmp_path / first).exists()
    assert (tmp_path / "results" / "kept.json").is_file()
    expected = [e.paths[0] for e, words in manifest.commands() if "taosmd" in manifest.systems_of(words)]
    assert expected and all("claimants" in p for p in expected)
    for bad in (["--system"], ["--system", "no-such-system"], ["--system", "-list"]):
        assert manifest.main(bad) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("make_results: error: --system"), err
    assert ran == [argv] and (tmp_path / "results" / "kept.json").is_file()
