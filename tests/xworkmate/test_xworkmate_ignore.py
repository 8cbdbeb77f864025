"""``artifact-ignore.md`` rules: every form, refused rules, the fenced block."""

from __future__ import annotations

import os
from pathlib import Path

from clawline.agents.confined import ConfinedDir
from clawline.xworkmate.ignore import IgnoreRules, load_ignore_rules, parse_ignore_rules


def load(directory: Path, warnings: list[str]) -> IgnoreRules:
    with ConfinedDir.open(directory) as root:
        return load_ignore_rules(root, warnings)


def parse(text: str) -> tuple[object, list[str]]:
    warnings: list[str] = []
    return parse_ignore_rules(text, warnings), warnings


def test_the_four_forms() -> None:
    warnings: list[str] = []
    rules = parse_ignore_rules("# comment\n\ndrafts/\n**/*.log\n*.tmp\nnotes/todo.md\n", warnings)
    assert warnings == []
    assert rules.ignores_dir("drafts")
    assert rules.ignores_dir("drafts/deep")
    assert not rules.ignores_dir("drafts2")
    assert rules.ignores_file("drafts/a.md")
    assert rules.ignores_file("a.log")
    assert rules.ignores_file("x/y/z.log")
    assert rules.ignores_file("scratch.tmp")
    assert not rules.ignores_file("sub/scratch.tmp")  # root level only
    assert rules.ignores_file("notes/todo.md")
    assert not rules.ignores_file("notes/todo.md.bak")
    assert not rules.ignores_file("other/notes/todo.md")
    assert not rules.ignores_file("report.md")


def test_the_ignore_file_itself_is_always_ignored() -> None:
    rules = parse_ignore_rules("", [])
    assert rules.ignores_file("artifact-ignore.md")
    assert not rules.ignores_file("sub/artifact-ignore.mdx")


def test_unsafe_rules_are_refused_with_a_warning() -> None:
    warnings: list[str] = []
    rules = parse_ignore_rules(
        "/etc/passwd\n../up\na/../b\n./here\n.\nC:\\x\n\\\\server\nnul\x00byte\nkeep.md\n", warnings
    )
    assert warnings == [
        "ignored unsafe artifact ignore rule: /etc/passwd",
        "ignored unsafe artifact ignore rule: ../up",
        "ignored unsafe artifact ignore rule: a/../b",
        "ignored unsafe artifact ignore rule: ./here",
        "ignored unsafe artifact ignore rule: .",
        "ignored unsafe artifact ignore rule: C:\\x",
        "ignored unsafe artifact ignore rule: \\\\server",
        "ignored unsafe artifact ignore rule: nul\x00byte",
    ]
    assert rules.ignores_file("keep.md")


def test_unsupported_wildcards_are_refused_with_a_warning() -> None:
    warnings: list[str] = []
    rules = parse_ignore_rules("foo*/\nsrc/*.js\n*.min.*\n**/*.a*b\na*b\n**/x.md\n", warnings)
    assert warnings == [
        "ignored unsupported artifact ignore rule: foo*/",
        "ignored unsupported artifact ignore rule: src/*.js",
        "ignored unsupported artifact ignore rule: *.min.*",
        "ignored unsupported artifact ignore rule: **/*.a*b",
        "ignored unsupported artifact ignore rule: a*b",
        "ignored unsupported artifact ignore rule: **/x.md",
    ]
    assert not rules.ignores_file("src/app.js")


def test_only_the_fenced_block_counts_when_there_is_one() -> None:
    text = (
        "# Artifacts\n\nThe prose below is not a rule:\n\nreport.md\n\n"
        "```artifact-ignore\n*.tmp\n# skipped comment\nbuild/\n```\n\nafter.md\n"
    )
    warnings: list[str] = []
    rules = parse_ignore_rules(text, warnings)
    assert warnings == []
    assert rules.ignores_file("a.tmp")
    assert rules.ignores_dir("build")
    assert not rules.ignores_file("report.md")
    assert not rules.ignores_file("after.md")


def test_without_a_block_every_line_is_a_rule() -> None:
    rules = parse_ignore_rules("```python\nreport.md\n```\n", [])
    assert rules.ignores_file("report.md")


def test_loading_reads_the_file_at_the_root(tmp_path: Path) -> None:
    (tmp_path / "artifact-ignore.md").write_text("*.tmp\n../bad\n")
    warnings: list[str] = []
    rules = load(tmp_path, warnings)
    assert rules.ignores_file("x.tmp")
    assert warnings == ["ignored unsafe artifact ignore rule: ../bad"]


def test_a_missing_or_symlinked_ignore_file_gives_no_rules(tmp_path: Path) -> None:
    assert not load(tmp_path, []).ignores_file("x.tmp")
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("*.tmp\n")
    os.symlink(elsewhere, tmp_path / "artifact-ignore.md")
    assert not load(tmp_path, []).ignores_file("x.tmp")
    (tmp_path / "artifact-ignore.md").unlink()
    (tmp_path / "artifact-ignore.md").mkdir()
    assert not load(tmp_path, []).ignores_file("x.tmp")
