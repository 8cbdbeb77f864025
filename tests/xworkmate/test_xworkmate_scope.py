"""Scopes, expected directories and extension lists: pure functions."""

from __future__ import annotations

import pytest

from clawline.xworkmate.open_params import XWorkmateError
from clawline.xworkmate.scope import (
    TaskScope,
    expected_dirs_or_default,
    extension_of,
    normalize_expected_dirs,
    normalize_extension_counts,
    normalize_extensions,
    safe_scope_segment,
)


@pytest.mark.parametrize(
    ("value", "segment"),
    [
        ("agent::main:main", "agent_main_main"),
        ("run alpha", "run_alpha"),
        ("thread-main", "thread-main"),
        ("agent:main:draft:1780636411666238-3", "agent_main_draft_1780636411666238-3"),
        ("  a//b\\\\c  ", "a_b_c"),
        ("..hidden..", "hidden"),
        ("_-.x.-_", "x"),
        ("", "scope"),
        ("///", "scope"),
        ("日本語", "scope"),
        ("a 日本 b", "a_b"),
        ("x" * 200, "x" * 96),
    ],
)
def test_safe_scope_segment(value: str, segment: str) -> None:
    assert safe_scope_segment(value) == segment


def test_the_scope_of_a_run() -> None:
    scope = TaskScope("agent:main:draft:1780636411666238-3", "run alpha")
    assert scope.session_scope == "tasks/agent_main_draft_1780636411666238-3"
    assert scope.relative == "tasks/agent_main_draft_1780636411666238-3/run_alpha"


def test_an_omitted_or_equal_scope_is_the_current_one() -> None:
    scope = TaskScope("agent:main:main", "turn-1")
    assert scope.check_supplied(None) == "tasks/agent_main_main/turn-1"
    assert scope.check_supplied("  ") == "tasks/agent_main_main/turn-1"
    assert scope.check_supplied("tasks/agent_main_main/turn-1") == "tasks/agent_main_main/turn-1"
    assert scope.check_supplied("tasks\\agent_main_main\\turn-1") == "tasks/agent_main_main/turn-1"


@pytest.mark.parametrize(
    "supplied",
    [
        "tasks/agent_main_main",
        "tasks/agent_main_main/turn-1/extra",
        "/tasks/agent_main_main/turn-1",
        "\\tasks\\agent_main_main\\turn-1",
        "C:/tasks/a/b",
        "other/agent_main_main/turn-1",
        "tasks/../turn-1",
        "tasks/./turn-1",
        "tasks//turn-1",
        "tasks/agent_main_main/turn-1/",
        "tasks/a\x00/b",
    ],
)
def test_a_scope_of_the_wrong_shape_is_refused(supplied: str) -> None:
    with pytest.raises(XWorkmateError) as caught:
        TaskScope("agent:main:main", "turn-1").check_supplied(supplied)
    assert str(caught.value) == "artifactScope must be a task artifact scope"


@pytest.mark.parametrize(
    "supplied", ["tasks/agent_main_main/turn-2", "tasks/agent_main_other/turn-1"]
)
def test_another_runs_scope_is_refused(supplied: str) -> None:
    with pytest.raises(XWorkmateError) as caught:
        TaskScope("agent:main:main", "turn-1").check_supplied(supplied)
    assert str(caught.value) == "artifactScope does not match sessionKey/runId"


@pytest.mark.parametrize(
    ("value", "dirs"),
    [
        (["artifacts/", "assets/images"], ["artifacts/", "assets/images/"]),
        ([" reports ", "reports/", "reports//"], ["reports/"]),
        (["a\\b", "a/b/"], ["a/b/"]),
        ([1, None, "", "  ", {"x": 1}, "dist"], ["dist/"]),
        ("reports/", []),
        ({"reports": True}, []),
        (None, []),
        ([], []),
    ],
)
def test_expected_dirs_are_normalised(value: object, dirs: list[str]) -> None:
    assert normalize_expected_dirs(value) == dirs


@pytest.mark.parametrize(
    "value", ["/abs", "C:\\x", "c:reports", "a/../b", "./reports", "..", "a/.", "rep\x00orts"]
)
def test_expected_dirs_must_stay_inside_the_workspace(value: str) -> None:
    with pytest.raises(XWorkmateError) as caught:
        normalize_expected_dirs(["ok", value])
    assert str(caught.value) == "expectedArtifactDir must stay inside the workspace"


def test_clawlines_default_applies_only_when_none_are_given() -> None:
    assert expected_dirs_or_default(None) == [
        "artifacts/",
        "reports/",
        "exports/",
        "assets/",
        "assets/images/",
        "dist/",
    ]
    assert expected_dirs_or_default([]) == []
    assert expected_dirs_or_default(["out"]) == ["out/"]


def test_extensions_are_normalised() -> None:
    value = [".PDF", "md", "..md", "a/b", "c\\d", "e\x00", 3, "", "Pdf", " .svg "]
    assert normalize_extensions(value) == ["pdf", "md", "svg"]
    assert normalize_extensions("pdf") == []


def test_expected_counts_keep_positive_whole_numbers() -> None:
    value = {".MD": 2, "svg": 0, "png": 1.5, "pdf": True, "a/b": 1, "csv": 3.0, "txt": "2"}
    assert normalize_extension_counts(value) == {"md": 2, "csv": 3}
    assert normalize_extension_counts([1]) == {}


def test_extension_of_a_path() -> None:
    assert extension_of("reports/Final.MD", ["pdf", "md"]) == "md"
    assert extension_of("a.tar.gz", ["tar.gz"]) == "tar.gz"
    assert extension_of("md", ["md"]) is None
    assert extension_of("reports.md/x", ["md"]) is None
