"""Shared SQL, written with SQLite's ``?`` placeholders, in psycopg's ``%s`` style.

The collaboration SQL is one text for both backends (:mod:`clawline.store._dialect`). It is
written in SQLite's style so SQLite runs it untouched, and each statement reads once, in one
place; PostgreSQL gets it through :func:`to_pyformat`, which reads the statement the way
PostgreSQL's lexer does, so that only real placeholders change:

- string literals (``'…'``, ``E'…'``, ``$tag$…$tag$``), quoted identifiers (``"…"``) and
  comments (``-- …``, ``/* … */``, which nest) are copied as they are;
- ``?|`` and ``?&`` are the jsonb operators and stay as they are;
- ``??`` is a literal ``?``: it writes the jsonb key-exists operator (``extra ?? 'model'``), where
  a lone ``?`` would be a placeholder;
- every other ``?`` is a placeholder and becomes ``%s``;
- ``%`` becomes ``%%`` everywhere, quoted text included: psycopg takes a ``%`` anywhere in a
  statement for the start of a placeholder.

The jsonb forms only mean something to PostgreSQL, so SQL that uses them is PostgreSQL-only.
"""

from __future__ import annotations

import functools
import re

_SPECIAL = re.compile(
    r"""
      (?P<estring> (?<![\w$]) [eE]' )
    | (?P<string> ' )
    | (?P<identifier> " )
    | (?P<dollar> (?<![\w$]) \$ (?: [^\W\d] \w* )? \$ )
    | (?P<line_comment> -- )
    | (?P<block_comment> /\* )
    | (?P<literal_mark> \?\? )
    | (?P<jsonb_operator> \? (?: \|(?!\|) | &(?!&) ) )
    | (?P<placeholder> \? )
    | (?P<percent> % )
    """,
    re.VERBOSE,
)
_REST_OF = {
    # What follows the opening quote, up to and including the closing one.
    "string": re.compile(r"(?:[^']|'')*'"),
    "estring": re.compile(r"(?:[^'\\]|\\.|'')*'", re.DOTALL),
    "identifier": re.compile(r'(?:[^"]|"")*"'),
    "line_comment": re.compile(r"[^\n]*"),
}
_COMMENT_BOUNDARY = re.compile(r"/\*|\*/")


@functools.lru_cache(maxsize=1024)
def to_pyformat(statement: str) -> str:
    """``statement`` with its ``?`` placeholders as ``%s`` (the rules: the module docstring).

    Unterminated quoted text or comments run to the end of the statement, as PostgreSQL reads
    them (it then refuses the statement with its own syntax error).
    """
    out: list[str] = []
    pos = 0
    while (match := _SPECIAL.search(statement, pos)) is not None:
        kind = match.lastgroup
        out.append(statement[pos : match.start()])
        pos = match.end()
        if kind == "placeholder":
            out.append("%s")
        elif kind == "percent":
            out.append("%%")
        elif kind == "literal_mark":
            out.append("?")
        elif kind == "jsonb_operator":
            out.append(match.group())
        else:
            end = _end_of_quoted(statement, kind or "", match)
            out.append(statement[match.start() : end].replace("%", "%%"))
            pos = end
    out.append(statement[pos:])
    return "".join(out)


def _end_of_quoted(statement: str, kind: str, opening: re.Match[str]) -> int:
    """Where the quoted text or comment that ``opening`` starts ends."""
    start = opening.end()
    if kind == "dollar":
        close = statement.find(opening.group(), start)
        return len(statement) if close < 0 else close + len(opening.group())
    if kind == "block_comment":
        depth = 1
        for boundary in _COMMENT_BOUNDARY.finditer(statement, start):
            depth += 1 if boundary.group() == "/*" else -1
            if depth == 0:
                return boundary.end()
        return len(statement)
    rest = _REST_OF[kind].match(statement, start)
    return rest.end() if rest is not None else len(statement)
