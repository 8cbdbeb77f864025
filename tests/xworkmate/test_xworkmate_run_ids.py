"""Run ids are scoped to their session: two app threads may both prepare ``turn-1`` and each
gets, reads and ends its own native task. Over a gateway, with real runs of the offline model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clawline.xworkmate.native import native_task_id
from tests.xworkmate.test_xworkmate_hooks import ended_run, send
from tests.xworkmate.xworkmate_support import APP_KEY, SESSION, prepare_params, xworkmate_gateway

OTHER = "agent:main:thread-other"
OTHER_APP = "thread-other"
GET = "xworkmate.tasks.get"


def other_params(run_id: str = "turn-1") -> dict[str, Any]:
    return {**prepare_params(run_id), "appThreadKey": OTHER_APP, "openclawSessionKey": OTHER}


async def test_the_same_run_id_in_two_sessions_gives_two_tasks(tmp_path: Path) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        services = xw.gw.runtime
        first = await xw.ok("xworkmate.session.prepare", prepare_params())
        second = await xw.ok("xworkmate.session.prepare", other_params())
        assert first["taskId"] == native_task_id(SESSION, "turn-1")
        assert second["taskId"] == native_task_id(OTHER, "turn-1")
        assert second["taskId"] != first["taskId"]
        again = await xw.ok("xworkmate.session.prepare", other_params())
        assert again["taskId"] == second["taskId"]  # a repeated prepare: the same task
        for session_key, prepared in ((SESSION, first), (OTHER, second)):
            task = await services.call(services.tasks.get, prepared["taskId"])
            assert task is not None
            assert (task.requester_session_key, task.owner_key) == (session_key, session_key)
            assert (task.run_id, task.status) == ("turn-1", "running")

        # the second thread's run ends: its task, and only its task, is finished
        await send(xw, "reply: the other thread is done", "turn-1", session_key=OTHER)
        assert (await ended_run(xw, "turn-1", session_key=OTHER))["status"] == "completed"
        theirs = await xw.ok(GET, {"appThreadKey": OTHER_APP, "runId": "turn-1"})
        assert (theirs["status"], theirs["taskStatus"]) == ("completed", "succeeded")
        assert theirs["taskId"] == second["taskId"]
        assert theirs["task"]["requesterSessionKey"] == OTHER
        mine = await xw.ok(GET, {"appThreadKey": APP_KEY, "runId": "turn-1"})
        assert (mine["status"], mine["taskStatus"]) == ("running", "running")
        assert mine["taskId"] == first["taskId"]
        assert mine["task"]["requesterSessionKey"] == SESSION


async def test_a_task_is_found_by_its_id_run_id_or_legacy_name_in_its_session_only(
    tmp_path: Path,
) -> None:
    async with xworkmate_gateway(tmp_path) as xw:
        first = await xw.ok("xworkmate.session.prepare", prepare_params())
        await xw.ok("xworkmate.session.prepare", other_params("turn-2"))
        for token in (first["taskId"], "turn-1", "xworkmate-turn-1"):
            found = await xw.ok(GET, {"openclawSessionKey": SESSION, "taskId": token})
            assert found["taskId"] == token, token
            assert found["task"]["taskId"] == first["taskId"], token
        for token in (first["taskId"], "turn-1", "xworkmate-turn-1"):
            refused = await xw.ok(GET, {"openclawSessionKey": OTHER, "taskId": token})
            assert refused["code"] == "no_native_task_record", token
