"""The offline model: deterministic, no network (docs/agents.md, "The offline model").

It reads the turn's message — the newest user message, or for a spawned child the task after
``[Subagent Task]:`` — and turns its directives (:mod:`.offline_directives`) into tool calls.
After tool results it answers with a one-line summary of them (``results: write_file ok; …``).
A message without directives is answered ``echo: <message>``. By turn kind
(:func:`clawline.agents.steps.classify_turn`):

- agent-to-agent reply step → ``REPLY_SKIP``, announce step → ``ANNOUNCE_SKIP`` (unless the
  message has a ``reply:`` directive);
- completion event → ``ack: <task> <status>`` (one line), and a ``spawn <n> x:`` wave of an
  earlier message resumes: it spawns the slots not yet accepted, one call per round, until a
  spawn is refused.

Wave slots: the k-th child of a wave is asked for by a call with the id
``offline-wave-<w>-<k>`` (``<w>`` is the wave message's transcript seq, stable across turns and
restarts), or ``offline-wave-<w>-<k>-r<n>`` after ``n`` refusals of that slot. A slot counts as
done once a call of it has an accepted result. A call cut off before its result reached the
transcript (a crash) has no result, so the slot is asked for again under the *same* id; the
spawn is keyed by that id (:mod:`clawline.collab.spawn_key`) and answers the child it already
made. So slot k is created at most once whatever the transcript lost, and the wave goes on
with k+1. An ``interrupted`` stand-in result (an abort) is no refusal: it keeps the id too.

Text is streamed word by word with ``delay_ms`` before each word, like the echo runner.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from clawline.agents.providers.base import (
    Finish,
    ModelMessage,
    ProviderError,
    StreamItem,
    TextDelta,
    ToolCall,
    ToolCallDone,
    Usage,
)
from clawline.agents.providers.offline_directives import SPAWN_TOOL, Wave, parse_directives
from clawline.agents.steps import (
    ANNOUNCE_SKIP,
    COMPLETION_EVENT_MARKER,
    REPLY_SKIP,
    TurnKind,
    classify_turn,
    subagent_task,
)
from clawline.agents.stream import word_chunks
from clawline.agents.tools.base import ToolSpec
from clawline.config import DEFAULT_ECHO_DELAY_MS
from clawline.types import JSONObject

_INFO_CHARS = 200
_EVENT_FIELD = re.compile(r"^(task|status):\s*(.*)$", re.MULTILINE)


@dataclass(slots=True)
class Plan:
    """What the offline model answers in one round."""

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    sleep_ms: int = 0
    fail: str | None = None


@dataclass(frozen=True, slots=True)
class _Result:
    name: str
    details: object


def _directive_text(message: str) -> str:
    task = subagent_task(message)
    return message if task is None else task


def _results(turn: Sequence[ModelMessage]) -> list[_Result]:
    names: dict[str, str] = {}
    out: list[_Result] = []
    for message in turn:
        for call in message.tool_calls:
            names[call.id] = call.name
        if message.role == "tool":
            try:
                details: object = json.loads(message.content)
            except ValueError:
                details = message.content
            name = message.name or names.get(message.tool_call_id or "", "tool")
            out.append(_Result(name, details))
    return out


def _status(details: object) -> str:
    if isinstance(details, dict) and isinstance(details.get("status"), str):
        return str(details["status"])
    return "ok"


def _info(result: _Result) -> str:
    details = result.details
    if not isinstance(details, dict):
        return str(details)[:_INFO_CHARS]
    info: object = details.get("error") or details.get("reply") or details.get("content")
    if result.name == "list_files" and isinstance(details.get("entries"), list):
        info = ", ".join(str(entry.get("path")) for entry in details["entries"])
    text = "" if info is None else str(info)
    if len(text) > _INFO_CHARS:
        text = text[:_INFO_CHARS] + "…"
    return text.replace("\n", "\\n")


def summarize(results: Sequence[_Result]) -> str:
    """``results: write_file ok; sessions_spawn accepted x3; read_file ok: <content>``."""
    parts: list[tuple[str, int]] = []
    for result in results:
        info = _info(result)
        part = f"{result.name} {_status(result.details)}" + (f": {info}" if info else "")
        if parts and parts[-1][0] == part and not info:
            parts[-1] = (part, parts[-1][1] + 1)
        else:
            parts.append((part, 1))
    return "results: " + "; ".join(p if n == 1 else f"{p} x{n}" for p, n in parts)


@functools.lru_cache(maxsize=16_384)
def _words(text: str) -> int:
    """Word count (the usage figures); cached, as every round counts the whole history."""
    return len(text.split())


_ACCEPTED_PREFIX = '{"status": "accepted"'
_SLOT_PREFIX = "offline-wave-"
_SLOT = re.compile(r"(\d+)(?:-r\d+)?")


def _accepted(content: str) -> bool:
    if content.startswith(_ACCEPTED_PREFIX):
        return True
    return '"accepted"' in content and _status(_parsed(content)) == "accepted"


def _wave_id(messages: Sequence[ModelMessage], origin: int) -> str:
    """The wave's identity: its message's transcript seq (the index only for messages that
    were not read from a transcript)."""
    seq = messages[origin].seq
    return str(seq) if seq is not None else f"i{origin}"


class _Prefixes:
    """What was worked out over a list of messages, kept so that the next round, whose list
    is the same messages (the same objects) plus new ones, only looks at the new ones.

    Every round of a turn reads the whole history; without this a wave of n spawns costs n²
    message visits. A prefix is recognised by the identity of its first and last message
    (both held here, so their ids cannot be reused); anything else starts from scratch."""

    def __init__(self, capacity: int = 1024) -> None:
        self._capacity = capacity
        self._known: dict[tuple[int, str], tuple[ModelMessage, ModelMessage, int, Any]] = {}

    def resume(self, messages: Sequence[ModelMessage], start: int, name: str) -> tuple[int, Any]:
        """Where to go on from and the state kept there (``start`` and ``None``: nothing)."""
        if start >= len(messages):
            return start, None
        known = self._known.get((id(messages[start]), name))
        if known is None:
            return start, None
        first, last, end, state = known
        if first is messages[start] and end <= len(messages) and messages[end - 1] is last:
            return end, state
        return start, None

    def keep(self, messages: Sequence[ModelMessage], start: int, name: str, state: Any) -> None:
        if start >= len(messages):
            return
        if len(self._known) >= self._capacity:
            self._known.clear()
        self._known[(id(messages[start]), name)] = (
            messages[start],
            messages[-1],
            len(messages),
            state,
        )


_PREFIXES = _Prefixes()


def _history_words(messages: Sequence[ModelMessage]) -> int:
    end, total = _PREFIXES.resume(messages, 0, "words")
    total = (total or 0) + sum(_words(message.content) for message in messages[end:])
    _PREFIXES.keep(messages, 0, "words", total)
    return int(total)


@dataclass(frozen=True, slots=True)
class _Slots:
    """What a wave's results so far say: slots ``0 … done - 1`` accepted, ``later`` accepted
    beyond the first free one, ``refusals`` per slot. Kept per history prefix and never
    changed in place (another history may go on from the same prefix)."""

    done: int = 0
    later: frozenset[int] = frozenset()
    refusals: tuple[tuple[int, int], ...] = ()

    def accepted(self, slot: int) -> _Slots:
        if slot < self.done or slot in self.later:
            return self
        if slot != self.done:
            return replace(self, later=self.later | {slot})
        done, later = slot + 1, set(self.later)
        while done in later:
            later.discard(done)
            done += 1
        return replace(self, done=done, later=frozenset(later))

    def refused(self, slot: int) -> _Slots:
        counts = dict(self.refusals)
        counts[slot] = counts.get(slot, 0) + 1
        return replace(self, refusals=tuple(counts.items()))


def _next_slot(messages: Sequence[ModelMessage], origin: int, wave: Wave) -> ToolCall | None:
    """The call for the wave's first slot without an accepted spawn; ``None`` when all are."""
    # Runs every round of a wave over the whole wave so far: look at spawn results only, and
    # only at the ones the previous round of this history did not see.
    wave_id = _wave_id(messages, origin)
    prefix = f"{_SLOT_PREFIX}{wave_id}-"
    start, kept = _PREFIXES.resume(messages, origin, prefix)
    slots: _Slots = kept if isinstance(kept, _Slots) else _Slots()
    for message in messages[start:]:
        call_id = message.tool_call_id or ""
        if message.role != "tool" or message.name != SPAWN_TOOL or not call_id.startswith(prefix):
            continue
        match = _SLOT.fullmatch(call_id, len(prefix))
        if match is None:
            continue
        if _accepted(message.content):
            slots = slots.accepted(int(match[1]))
        elif not message.interrupted:
            slots = slots.refused(int(match[1]))
    _PREFIXES.keep(messages, origin, prefix, slots)
    if slots.done >= wave.count:
        return None
    tries = dict(slots.refusals).get(slots.done, 0)
    call_id = f"{prefix}{slots.done}" + (f"-r{tries}" if tries else "")
    return ToolCall(id=call_id, name=SPAWN_TOOL, arguments={"task": wave.task})


def _parsed(content: str) -> object:
    try:
        return json.loads(content)
    except ValueError:
        return content


def _completion_ack(message: str) -> str:
    acks: list[str] = []
    for chunk in message.split(COMPLETION_EVENT_MARKER)[1:]:
        fields = dict(_EVENT_FIELD.findall(chunk))
        acks.append(f"{fields.get('task', 'task')} {fields.get('status', 'finished')}".strip())
    return "ack: " + ("; ".join(acks) or "completion event")


def _wave_origin(messages: Sequence[ModelMessage], system: str) -> int | None:
    """Index of the newest plain user message (not an event or a step) when it has a
    ``spawn <n> x:`` directive: a newer instruction ends an older wave."""
    # Every round of a completion turn asks, over a history that only grew: go on from where
    # the previous round of this history stopped.
    start, kept = _PREFIXES.resume(messages, 0, "origin:" + system)
    origin: int | None = kept
    for index in range(start, len(messages)):
        message = messages[index]
        if message.role != "user":
            continue
        if classify_turn(message.content, system) in (TurnKind.MESSAGE, TurnKind.A2A_MESSAGE):
            wave = parse_directives(_directive_text(message.content)).wave
            origin = index if wave is not None else None
    _PREFIXES.keep(messages, 0, "origin:" + system, origin)
    return origin


def _last_spawn_refused(turn: Sequence[ModelMessage]) -> bool:
    """Whether the turn's latest spawn result is not ``accepted``."""
    for message in reversed(turn):
        if message.role == "tool" and message.name == SPAWN_TOOL:
            return not _accepted(message.content)
    return False


def _call(name: str, arguments: JSONObject, serial: int) -> ToolCall:
    return ToolCall(id=f"offline-{serial}-{name}", name=name, arguments=arguments)


def plan_reply(system: str, messages: Sequence[ModelMessage]) -> Plan:
    """The offline model's answer to ``messages`` (pure; see the module docstring)."""
    last_user = next(
        (i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), -1
    )
    if last_user < 0:
        return Plan(text="echo: ")
    trigger = messages[last_user].content
    turn = messages[last_user + 1 :]
    first_round = not any(message.tool_calls for message in turn)
    serial = len(messages)
    kind = classify_turn(trigger, system)
    directives = parse_directives("" if kind is TurnKind.COMPLETION else _directive_text(trigger))
    if kind in (TurnKind.REPLY_STEP, TurnKind.ANNOUNCE_STEP):
        skip = REPLY_SKIP if kind is TurnKind.REPLY_STEP else ANNOUNCE_SKIP
        return Plan(text=directives.reply if directives.reply is not None else skip)
    if kind is TurnKind.COMPLETION:
        origin = _wave_origin(messages[:last_user], system)
        directives = parse_directives("")
        if origin is not None:
            directives.wave = parse_directives(_directive_text(messages[origin].content)).wave
    else:
        origin = last_user
    wave = directives.wave
    if wave is not None and origin is not None:
        slot_call = None if _last_spawn_refused(turn) else _next_slot(messages, origin, wave)
        if slot_call is not None:
            plan = Plan(calls=[slot_call])
            if first_round and kind is not TurnKind.COMPLETION:
                plan.calls[:0] = [
                    _call(tool.name, dict(tool.arguments), serial + 1 + n)
                    for n, tool in enumerate(directives.tools)
                ]
                plan.sleep_ms, plan.fail = directives.sleep_ms, directives.fail
            return plan
    if first_round and kind is not TurnKind.COMPLETION:
        calls = [
            _call(tool.name, dict(tool.arguments), serial + n)
            for n, tool in enumerate(directives.tools)
        ]
        if calls or directives.fail is not None:
            return Plan(calls=calls, sleep_ms=directives.sleep_ms, fail=directives.fail)
        text = directives.reply if directives.reply is not None else f"echo: {trigger}"
        if directives.reply is None and subagent_task(trigger) is not None:
            text = f"echo: {subagent_task(trigger)}"
        return Plan(text=text, sleep_ms=directives.sleep_ms)
    results = _results(turn)
    if kind is TurnKind.COMPLETION:
        opening = _completion_ack(trigger)
        return Plan(text=opening + (f" | {summarize(results)}" if results else ""))
    return Plan(text=directives.reply if directives.reply is not None else summarize(results))


class OfflineProvider:
    """The ``offline`` model (see the module docstring)."""

    def __init__(self, delay_ms: int = DEFAULT_ECHO_DELAY_MS) -> None:
        self.delay_ms = delay_ms

    async def stream(
        self,
        *,
        model: str,
        system: str,
        messages: Sequence[ModelMessage],
        tools: Sequence[ToolSpec],
    ) -> AsyncIterator[StreamItem]:
        plan = plan_reply(system, messages)
        if plan.sleep_ms:
            await asyncio.sleep(plan.sleep_ms / 1000)
        if plan.fail is not None:
            raise ProviderError(plan.fail, provider="offline")
        for chunk in word_chunks(plan.text):
            await asyncio.sleep(self.delay_ms / 1000)
            yield TextDelta(chunk)
        for call in plan.calls:
            yield ToolCallDone(call)
        words = _history_words(messages)
        usage = Usage(input=words + _words(system), output=_words(plan.text))
        yield Finish("toolUse" if plan.calls else "stop", usage)
