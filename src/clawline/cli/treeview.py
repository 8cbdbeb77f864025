"""Drawing lineage trees as text::

    root agent:main:main ── "Main chat"  [running]
    ├── agent:main:subagent:a ── "researcher"  [done]
    │   └── agent:main:subagent:c  (not in catalog)
    └── agent:main:subagent:b  [-]

A root's line starts with ``root``. A node shows its key, its title in quotes after ``──``
(display name, else label; left out when it would only repeat the key) and its status in
brackets (``-`` when unset). Placeholders stand for ancestors that have no entry; the focused
node ends with ``◀``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rich.console import Console
from rich.text import Text

from clawline.cli.render import printable, title_of
from clawline.lineage.tree import TreeNode

NOT_IN_CATALOG = "(not in catalog)"
FOCUS_MARK = "◀"
ROOT_MARK = "root "
TITLE_MARK = " ── "

_TEE, _ELBOW, _PIPE, _BLANK = "├── ", "└── ", "│   ", "    "


@dataclass(frozen=True, slots=True)
class TreeLine:
    text: str
    style: str = ""


def _always_missing(_key: str) -> str:
    return NOT_IN_CATALOG


def node_text(node: TreeNode, placeholder: Callable[[str], str] = _always_missing) -> str:
    if node.entry is None:
        return f"{printable(node.key)}  {placeholder(node.key)}"
    entry = node.entry
    title = title_of(entry)
    named = printable(entry.key)
    if title != entry.key:
        named += f'{TITLE_MARK}"{printable(title)}"'
    return f"{named}  [{printable(entry.status or '-')}]"


def draw_tree(
    root: TreeNode,
    *,
    focus: str | None = None,
    placeholder: Callable[[str], str] = _always_missing,
) -> list[TreeLine]:
    """The lines of one tree, root first, children in the forest's order."""

    def line(node: TreeNode, prefix: str) -> TreeLine:
        text = prefix + node_text(node, placeholder)
        if node.key == focus:
            return TreeLine(f"{text}  {FOCUS_MARK}", "bold")
        return TreeLine(text, "dim" if node.entry is None else "")

    lines = [line(root, ROOT_MARK)]
    _draw_children(root, "", lines, line)
    return lines


def _draw_children(
    node: TreeNode,
    prefix: str,
    lines: list[TreeLine],
    line: Callable[[TreeNode, str], TreeLine],
) -> None:
    for index, child in enumerate(node.children):
        last = index == len(node.children) - 1
        lines.append(line(child, prefix + (_ELBOW if last else _TEE)))
        _draw_children(child, prefix + (_BLANK if last else _PIPE), lines, line)


def draw_forest(
    roots: Iterable[TreeNode],
    *,
    focus: str | None = None,
    placeholder: Callable[[str], str] = _always_missing,
) -> list[TreeLine]:
    lines: list[TreeLine] = []
    for root in roots:
        lines.extend(draw_tree(root, focus=focus, placeholder=placeholder))
    return lines


def print_lines(console: Console, lines: Iterable[TreeLine]) -> None:
    for tree_line in lines:
        console.print(Text(tree_line.text, style=tree_line.style), soft_wrap=True)
