"""The ``?`` → ``%s`` translation of shared SQL for PostgreSQL (``store._placeholders``)."""

from __future__ import annotations

import pytest

from clawline.store._placeholders import to_pyformat
from clawline.store.postgres.collab import postgres_dialect
from clawline.store.sqlite.collab import SQLITE


@pytest.mark.parametrize(
    ("shared", "pyformat"),
    [
        (
            "SELECT a FROM t WHERE b = ? AND c IN (?, ?)",
            "SELECT a FROM t WHERE b = %s AND c IN (%s, %s)",
        ),
        ("UPDATE t SET a = ? || b, c = ?||'x'", "UPDATE t SET a = %s || b, c = %s||'x'"),
        ("SELECT '?', 'it''s ?' WHERE a = ?", "SELECT '?', 'it''s ?' WHERE a = %s"),
        ("SELECT E'\\'?', e'?\\\\' WHERE a = ?", "SELECT E'\\'?', e'?\\\\' WHERE a = %s"),
        ("SELECT type'?' WHERE a=?", "SELECT type'?' WHERE a=%s"),
        ('SELECT 1 AS "why?", "a""?" WHERE a = ?', 'SELECT 1 AS "why?", "a""?" WHERE a = %s'),
        (
            "SELECT $$ ? $$, $q$ '?' $q$, $1 WHERE a = ?",
            "SELECT $$ ? $$, $q$ '?' $q$, $1 WHERE a = %s",
        ),
        ("SELECT a$b$ FROM t WHERE a = ?", "SELECT a$b$ FROM t WHERE a = %s"),
        ("SELECT 1 -- why ?\nWHERE a = ?", "SELECT 1 -- why ?\nWHERE a = %s"),
        ("SELECT /* a /* ? */ still ? */ ?", "SELECT /* a /* ? */ still ? */ %s"),
        ("SELECT x ?? 'k', x ?| ?, x ?& ?", "SELECT x ? 'k', x ?| %s, x ?& %s"),
        ("SELECT x ??| ?, x @?? '$.a'", "SELECT x ?| %s, x @? '$.a'"),
        ("SELECT a LIKE '50%' AND b % ?", "SELECT a LIKE '50%%' AND b %% %s"),
        ("SELECT 'never closed ?", "SELECT 'never closed ?"),
        ("SELECT /* never closed ?", "SELECT /* never closed ?"),
        ("SELECT 1", "SELECT 1"),
    ],
)
def test_only_placeholders_change(shared: str, pyformat: str) -> None:
    assert to_pyformat(shared) == pyformat


def test_the_dialects_translate_only_for_postgres() -> None:
    statement = "SELECT '?' FROM t WHERE a = ? AND b ?| ?"
    assert SQLITE.q(statement) == statement
    assert postgres_dialect("public").q(statement) == "SELECT '?' FROM t WHERE a = %s AND b ?| %s"
