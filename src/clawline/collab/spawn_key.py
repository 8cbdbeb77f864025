"""The durable key of a spawn: a ``sessions_spawn`` call creates its child at most once.

The key is ``<requester session id>/<tool call id>``: the requester's incarnation (a reset
gives the session a new id, so its new calls never meet the old ones) and the call that asked
for the child. It is stored on the child's run record (``SubagentRun.spawn_key``, unique per
requester). The spawn looks it up twice:

- first, without a lock (:func:`first_look`, which reads in the same trip to the store the
  requester's entry and active children for the checks that follow): a call redone after a
  crash — the turn that made it was cut off after the child was committed but before the
  call's result reached the transcript — answers the original accepted result at once, before
  any check that the redo would now fail (the child limit counts that very child), and before
  anything a spawn does ahead of its transaction that the transaction cannot take back: a
  thread created on a channel, attachments written, a ``subagent_spawning`` plugin asked. A
  spawn with none of those skips this look (its transaction makes both checks, the key's
  first: a redo is answered there, ahead of the limit);
- then inside the spawn transaction, after the requester's spawn lock
  (``tx.runs.count_active``): a concurrent spawn with the same key that committed meanwhile
  makes the transaction raise :class:`AlreadySpawned`, which is answered the same way. The
  unique index is the last word: two transactions can never both insert one key.

A call without an id (a tool invoked directly, not by a model) or a requester without an entry
has no key; such a spawn always creates a child.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawline.errors import Conflict
from clawline.records.collab import SubagentRun
from clawline.records.session import SessionEntry

if TYPE_CHECKING:
    from clawline.agents.tools.base import ToolContext
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers


class AlreadySpawned(Conflict):
    """The spawn transaction found the key already recorded: nothing was written."""

    def __init__(self, record: SubagentRun) -> None:
        super().__init__(f"already spawned by this call: {record.child_session_key}")
        self.record = record


def spawn_key(ctx: ToolContext) -> str | None:
    """The key of the spawn ``ctx``'s call asks for; ``None`` when it has none."""
    if not ctx.tool_call_id or ctx.entry is None:
        return None
    return f"{ctx.entry.session_id}/{ctx.tool_call_id}"


@dataclass(frozen=True)
class FirstLook:
    """What a spawn reads before its checks: the record this call's key already made (then
    nothing else), else — when asked — the requester's entry and its active children."""

    earlier: SubagentRun | None
    requester_entry: SessionEntry | None = None
    active: int | None = None
    """The requester's active children (``None``: not counted, left to the transaction)."""


async def first_look(
    ctx: ToolContext,
    requester: str,
    *,
    store: Store,
    workers: StoreWorkers,
    requester_too: bool,
    turn_entry: bool = False,
    ahead: bool = True,
) -> FirstLook:
    """The unlocked reads before a spawn, in one trip to a store worker (none when there is
    nothing to read). ``turn_entry``: the requester's entry may be the one the calling turn
    holds (the spawn reads only what a session's life does not change, its depth and agent; a
    thread-bound spawn also reads its delivery context, and reads the entry afresh).
    ``ahead=False``: the spawn does nothing its transaction cannot take back, so the key and
    the active children are left to the transaction (``active`` is then ``None``)."""
    known = ctx.entry if turn_entry and ctx.entry is not None else None
    if known is not None and known.key != requester:
        known = None
    key = spawn_key(ctx) if ahead else None
    if key is None and requester_too and known is not None and not ahead:
        return FirstLook(None, known)
    return await workers.run(_first_look_now, store, requester, key, requester_too, known, ahead)


def _first_look_now(
    store: Store,
    requester: str,
    key: str | None,
    requester_too: bool,
    known: SessionEntry | None,
    ahead: bool,
) -> FirstLook:
    earlier = None if key is None else store.runs.by_spawn_key(requester, key)
    if earlier is not None or not requester_too:
        return FirstLook(earlier)
    entry = known if known is not None else store.get(requester)
    return FirstLook(None, entry, store.runs.count_active(requester) if ahead else None)
