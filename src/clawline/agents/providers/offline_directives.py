"""The offline model's directives: one per line of a message (docs/agents.md).

==========================  =====================================================
``spawn: <task>``           ``sessions_spawn {task}``
``spawn <label>: <task>``   ``sessions_spawn {task, label}``
``spawn <n> x: <task>``     ``n`` spawns in waves (:class:`Wave`)
``spawn thread <l>: <t>``   ``sessions_spawn {task, label, thread: true}``: a
                            thread-bound session (``spawn thread: <t>`` unlabelled)
``send <label>: <text>``    ``sessions_send {label, message}`` (a target containing
                            ``:`` is a ``sessionKey``)
``write <path>: <text>``    ``write_file {path, content}``
``read <path>``             ``read_file {path}``
``list [<dir>]``            ``list_files {path?}``
``yield``                   ``sessions_yield {}``
``reply: <text>``           answer exactly ``<text>``
``sleep <ms>``              wait ``ms`` before answering
``fail: <text>``            the turn fails with ``<text>``
==========================  =====================================================

In every ``<task>``/``<text>`` the two characters ``\\n`` stand for a newline, so a spawned
child can get a multi-line task (its own directives). Lines that are no directive are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clawline.types import JSONObject

SPAWN_TOOL = "sessions_spawn"

_WAVE = re.compile(r"spawn\s+(\d+)\s*x\s*:\s*(.+)")
_SPAWN = re.compile(r"spawn\s*:\s*(.+)")
_SPAWN_THREAD = re.compile(r"spawn\s+thread(?:\s+([^\s:]+))?\s*:\s*(.+)")
_SPAWN_LABELLED = re.compile(r"spawn\s+([^\s:]+)\s*:\s*(.+)")
_SEND = re.compile(r"send\s+(\S+):\s+(.+)")
_WRITE = re.compile(r"write\s+(\S+?)\s*:\s?(.*)")
_READ = re.compile(r"read\s+(\S+)")
_LIST = re.compile(r"list(?:\s+(\S+))?")
_REPLY = re.compile(r"reply:\s?(.*)")
_SLEEP = re.compile(r"sleep\s+(\d+)")
_FAIL = re.compile(r"fail:\s*(.*)")


def _text(raw: str) -> str:
    return raw.replace("\\n", "\n")


@dataclass(frozen=True, slots=True)
class ToolDirective:
    name: str
    arguments: JSONObject


@dataclass(frozen=True, slots=True)
class Wave:
    """``spawn <n> x: <task>``: ``count`` children with the same task, spawned one call per
    round until a spawn is refused (the requester's active-children limit) — the rest follow
    in later turns, as completions free slots."""

    count: int
    task: str


@dataclass(slots=True)
class Directives:
    tools: list[ToolDirective] = field(default_factory=list)
    wave: Wave | None = None
    reply: str | None = None
    sleep_ms: int = 0
    fail: str | None = None

    @property
    def empty(self) -> bool:
        return not self.tools and self.wave is None and self.reply is None and self.fail is None


def _tool(line: str) -> ToolDirective | None:
    if match := _SPAWN_THREAD.fullmatch(line):
        arguments: JSONObject = {"task": _text(match[2]), "thread": True}
        if match[1]:
            arguments["label"] = match[1]
        return ToolDirective(SPAWN_TOOL, arguments)
    if match := _SPAWN.fullmatch(line):
        return ToolDirective(SPAWN_TOOL, {"task": _text(match[1])})
    if match := _SPAWN_LABELLED.fullmatch(line):
        return ToolDirective(SPAWN_TOOL, {"task": _text(match[2]), "label": match[1]})
    if match := _SEND.fullmatch(line):
        target = "sessionKey" if ":" in match[1] else "label"
        return ToolDirective("sessions_send", {target: match[1], "message": _text(match[2])})
    if match := _WRITE.fullmatch(line):
        return ToolDirective("write_file", {"path": match[1], "content": _text(match[2])})
    if match := _READ.fullmatch(line):
        return ToolDirective("read_file", {"path": match[1]})
    if match := _LIST.fullmatch(line):
        return ToolDirective("list_files", {"path": match[1]} if match[1] else {})
    if line == "yield":
        return ToolDirective("sessions_yield", {})
    return None


def parse_directives(text: str) -> Directives:
    found = Directives()
    for raw in text.splitlines():
        line = raw.strip()
        if match := _WAVE.fullmatch(line):
            found.wave = Wave(int(match[1]), _text(match[2]))
        elif match := _REPLY.fullmatch(line):
            found.reply = _text(match[1])
        elif match := _SLEEP.fullmatch(line):
            found.sleep_ms += int(match[1])
        elif match := _FAIL.fullmatch(line):
            found.fail = _text(match[1]) or "failed"
        elif (tool := _tool(line)) is not None:
            found.tools.append(tool)
    return found
