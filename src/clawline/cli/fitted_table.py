"""Tables that fit the console: plain columns two spaces apart, one line per row.

A table that fits is printed at its natural width (always, when the console is not a terminal
and ``COLUMNS`` is unset: :func:`~clawline.cli.render.make_console`). One that does not takes
the table's steps in order until it fits: each step either folds an *optional* column away or
cuts a *squeezable* one, down to :data:`MIN_SQUEEZED` characters (never below its header); a
cut cell ends with ``…``. If it is still too wide after the last step (a very narrow terminal),
rich shares the cut among all columns. A cell never wraps onto a second line, and no line ends
with spaces.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text

GAP = 2
"""Spaces between two columns."""
MIN_SQUEEZED = 8
"""A squeezed column keeps at least this many characters (or its header's width)."""

Cell = str | Text


@dataclass(frozen=True, slots=True)
class Column:
    header: str
    fold: int = 0
    """0: always shown; else optional: folded away at this step when the table is too wide."""
    squeeze: int = 0
    """0: cut only as a last resort; else cut at this step when the table is too wide."""
    justify: JustifyMethod = "left"
    max_width: int | None = None
    """Cut to this width even when there is room (free text such as titles)."""


def _natural(column: Column, cells: Iterable[Text]) -> int:
    width = max([len(column.header), *(cell.cell_len for cell in cells)])
    return width if column.max_width is None else min(width, column.max_width)


def _total(widths: Sequence[int | None]) -> int:
    shown = [width for width in widths if width is not None]
    return sum(shown) + GAP * max(0, len(shown) - 1)


def fit_steps(columns: Sequence[Column]) -> list[tuple[str, int]]:
    """What a too wide table does, in order: ``("fold" | "cut", column index)``."""
    steps = [(c.fold, i, "fold") for i, c in enumerate(columns) if c.fold]
    steps += [(c.squeeze, i, "cut") for i, c in enumerate(columns) if c.squeeze]
    return [(kind, index) for _, index, kind in sorted(steps)]


def fit_widths(columns: Sequence[Column], natural: Sequence[int], width: int) -> list[int | None]:
    """Each column's width in a console ``width`` wide, ``None`` for a folded one."""
    widths: list[int | None] = list(natural)
    for kind, index in fit_steps(columns):
        current = widths[index]
        excess = _total(widths) - width
        if excess <= 0:
            break
        if current is None:
            continue
        if kind == "fold":
            widths[index] = None
        else:
            floor = min(current, max(len(columns[index].header), MIN_SQUEEZED))
            widths[index] = current - min(excess, current - floor)
    return widths


def print_table(
    console: Console, columns: Sequence[Column], rows: Iterable[Sequence[Cell]]
) -> None:
    """Print ``rows`` (one cell per column; strings are plain text) fitted to ``console``."""
    texts = [[cell if isinstance(cell, Text) else Text(cell) for cell in row] for row in rows]
    natural = [_natural(column, (row[i] for row in texts)) for i, column in enumerate(columns)]
    widths = fit_widths(columns, natural, console.width)
    shown = [i for i, width in enumerate(widths) if width is not None]
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for index in shown:
        column = columns[index]
        table.add_column(
            column.header,
            width=widths[index],
            no_wrap=True,
            overflow="ellipsis",
            justify=column.justify,
        )
    for row in texts:
        table.add_row(*(row[index] for index in shown))
    for line in console.render_lines(table, pad=False):
        text = Text.assemble(*((segment.text, segment.style or "") for segment in line))
        text.rstrip()
        console.print(text, soft_wrap=True)
