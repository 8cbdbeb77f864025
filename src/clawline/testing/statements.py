"""Counting what a SQLite store's connection runs (``SQLiteStore.trace``), for benchmarks and
for tests that bound the store work behind an operation."""

from __future__ import annotations


class StatementCount:
    """Transactions (``BEGIN``) and the other statements a connection ran; ``COMMIT``,
    ``ROLLBACK`` and the ``-- TRIGGER`` lines SQLite reports are not counted."""

    def __init__(self) -> None:
        self.transactions = 0
        self.statements = 0

    def __call__(self, sql: str) -> None:
        head = sql.lstrip()[:8].upper()
        if head.startswith("BEGIN"):
            self.transactions += 1
        elif not head.startswith(("COMMIT", "ROLLBACK", "--")):
            self.statements += 1
