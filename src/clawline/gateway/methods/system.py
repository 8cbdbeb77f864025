"""``health``, ``events.replay`` and ``system.info`` (the host the gateway runs on, in the shape
of OpenClaw's, whose Control UI shows it on its Systems page: ``runtimeVersion`` names Python
where OpenClaw's ``nodeVersion`` names Node)."""

from __future__ import annotations

import os
import platform
import shutil
import socket
import time

from clawline.gateway.bus import EventsNotRetained, Replay
from clawline.gateway.frames import GatewayError
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import READ
from clawline.types import JSON

methods = MethodRegistry()


@methods.method("health", scope=None, schema={})
async def health(call: Call) -> JSON:
    bus = call.gateway.bus
    return {
        "ok": True,
        "status": "live",
        "ts": call.gateway.clock.now_ms(),
        "bootId": bus.boot_id,
        "lastSeq": bus.last_seq,
        "store": call.gateway.store.backend,
        "instanceId": call.gateway.instance.instance_id,
    }


_STARTED = time.monotonic()
_ARCH = {"x86_64": "x64", "aarch64": "arm64", "amd64": "x64", "i686": "ia32"}
"""``platform.machine()`` in Node's ``os.arch()`` names, as OpenClaw's clients expect them."""


@methods.method("system.info", scope=READ, schema={})
async def system_info(call: Call) -> JSON:
    return await call.gateway.workers.run(_system_info, call)


def _system_info(call: Call) -> JSON:
    uname = os.uname()
    info: dict[str, JSON] = {
        "machineName": socket.gethostname(),
        "hostname": socket.gethostname(),
        "platform": uname.sysname.lower(),
        "release": uname.release,
        "arch": _ARCH.get(uname.machine.lower(), uname.machine.lower()),
        "osLabel": f"{uname.sysname} {uname.release}",
        "runtimeVersion": f"Python {platform.python_version()}",
        "pid": os.getpid(),
        "processInstanceId": call.gateway.instance.instance_id,
        "uptimeMs": round((time.monotonic() - _STARTED) * 1000),
        "cpuCount": os.cpu_count() or 1,
        "loadAverage": list(os.getloadavg()),
        "defaultAgentUtilityModel": {"status": "unavailable"},
    }
    pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    free_pages = os.sysconf("SC_AVPHYS_PAGES")
    info["memoryTotalBytes"] = pages * page_size
    info["memoryFreeBytes"] = free_pages * page_size
    state_dir = str(call.gateway.state_dir)
    if os.path.isdir(state_dir):
        disk = shutil.disk_usage(state_dir)
        info["disks"] = [{"path": state_dir, "totalBytes": disk.total, "availableBytes": disk.free}]
        info.update(diskTotalBytes=disk.total, diskAvailableBytes=disk.free, diskPath=state_dir)
    return info


def _refusal(call: Call, error: EventsNotRetained) -> GatewayError:
    bus = call.gateway.bus
    return GatewayError(
        error.message,
        details={
            "bootId": bus.boot_id,
            "lastSeq": bus.last_seq,
            "oldestSeq": bus.oldest_retained_seq,
            "errorType": error.category.__name__,
            "errorClass": type(error).__name__,
        },
    )


async def prepare_replay(call: Call, after_seq: int, boot_id: str | None) -> Replay:
    """The replay of the events after ``after_seq`` made ready (a shared stream may read the
    store for it); refused as a :class:`GatewayError` when they are gone."""
    try:
        return await call.gateway.bus.replay_from(after_seq, boot_id)
    except EventsNotRetained as error:
        raise _refusal(call, error) from None


def deliver_replay(call: Call, replay: Replay) -> int:
    """Queue, on this connection, the events of ``replay`` its subscriptions select; return
    how many. Call it with no ``await`` after :func:`prepare_replay` returned, and make the
    subscription change it replays for in between, so no live event slips in between."""
    try:
        missed = replay.select(call.connection)
    except EventsNotRetained as error:
        raise _refusal(call, error) from None
    for event in missed:
        call.connection.deliver_replayed(event)
    return len(missed)


async def replay_missed(call: Call, after_seq: int, boot_id: str | None) -> int:
    """Queue, on this connection, the retained events after ``after_seq`` it would have
    received (by its current subscriptions); return how many."""
    return deliver_replay(call, await prepare_replay(call, after_seq, boot_id))


@methods.method(
    "events.replay",
    scope=READ,
    schema={"afterSeq": P.integer(required=True, min=0), "bootId": P.string(max_len=64)},
)
async def events_replay(call: Call) -> JSON:
    """Send again, in order, the events after ``afterSeq`` that this connection's current
    subscriptions select (clawline's extension for reconnecting clients)."""
    count = await replay_missed(call, call.params["afterSeq"], call.params.get("bootId"))
    bus = call.gateway.bus
    return {"replayed": count, "lastSeq": bus.last_seq, "bootId": bus.boot_id}
