"""A small ACP agent for the family and ``acp ls`` tests, speaking raw NDJSON on stdio.

Run as a real subprocess: ``python crafted_agent.py``. ``CRAFTED_SCENARIO`` selects what it
serves (capabilities, ``session/list`` pages, failures); ``CRAFTED_LOG`` names a JSONL file that
receives the agent's pid (``{"pid": n}``) and every message read (``{"in": msg}``) and written
(``{"out": msg}``), so a test can count calls, check the traffic and see the process end. Pages
are addressed by cursor ``c<N>`` (page N; the first call has no cursor). Standard library only,
so tests may import the scenario data.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

JSON = Any
Page = dict[str, Any]
MAIN = "agent:main:main"
SUB = "agent:main:subagent:"
LIST_CAPS: JSON = {"list": {}}


def row(
    session_id: str,
    updated_at: JSON = None,
    title: JSON = None,
    *,
    meta_raw: JSON = None,
    **meta: JSON,
) -> JSON:
    """A ``SessionInfo``; keyword arguments become ``_meta`` (``meta_raw`` replaces it)."""
    info: dict[str, JSON] = {"sessionId": session_id, "cwd": "/work/project"}
    if title is not None:
        info["title"] = title
    if updated_at is not None:
        info["updatedAt"] = updated_at
    info["_meta"] = {"sessionKey": session_id, **meta} if meta_raw is None else meta_raw
    return info


# A family spread over three overlapping pages (the expected projection is in the tests).
FAMILY_PAGES: list[Page] = [
    {
        "sessions": [
            row(MAIN, "2026-01-01T12:00:00Z", "  Main chat  ", kind="direct"),
            row(SUB + "b", "2026-01-01T12:00:00+02:00", "B", parentSessionId=MAIN),
            row(SUB + "grand", "2026-01-01T13:00:00Z", parentSessionId=SUB + "a"),
        ],
        "nextCursor": "c1",
    },
    {
        "sessions": [
            row(SUB + "a", "2026-01-01T11:00:00Z", "first A", parentSessionId=MAIN),
            row(SUB + "b", "2030-01-01T00:00:00Z", "dup", parentSessionId="agent:other:main"),
            row("agent:main:acp:x", "2026-01-01T14:00:00Z", parentSessionId=MAIN),
            row(
                SUB + "self",
                "2026-01-01T09:00:00-01:00",
                spawnedBy=MAIN,
                parentSessionId=SUB + "self",
            ),
            row(SUB + "blank", "2026-01-01T10:30:00", "   ", parentSessionId="  ", spawnedBy=MAIN),
        ],
        "nextCursor": "c2",
    },
    {
        "sessions": [
            row(SUB + "a", "2031-01-01T00:00:00Z", "second A", parentSessionId="agent:x:main"),
            row(SUB + "none", None, parentSessionId=MAIN),
            row(SUB + "bad", "yesterday", spawnedBy=MAIN),
            row(SUB + "num", "2026-01-01T15:00:00Z", parentSessionId=42, spawnedBy=" " + MAIN),
            row(SUB + "meta-array", "2026-01-01T15:00:00Z", meta_raw=[MAIN]),
            row(SUB + "a:b", "2026-01-01T15:00:00Z", parentSessionId=MAIN),
        ],
    },
]


def _endless(index: int) -> Page:
    return {
        "sessions": [row(f"{SUB}p{index}", parentSessionId=MAIN)],
        "nextCursor": f"c{index + 1}",
    }


def _finite(count: int) -> Callable[[int], Page]:
    def page(index: int) -> Page:
        served = _endless(index)
        if index + 1 == count:
            del served["nextCursor"]
        return served

    return page


def _listed(pages: list[Page]) -> Callable[[int], Page]:
    return lambda index: pages[index]


def _one(result: JSON) -> Callable[[int], Page]:
    return lambda _index: result


_MAIN_ROW = row(MAIN)
PAGES: dict[str, Callable[[int], Page]] = {
    "family": _listed(FAMILY_PAGES),
    "empty": _one({"sessions": []}),
    "cursor_null": _one({"sessions": [_MAIN_ROW], "nextCursor": None}),
    "cursor_int": _one({"sessions": [_MAIN_ROW], "nextCursor": 5}),
    "cursor_empty": _one({"sessions": [_MAIN_ROW], "nextCursor": ""}),
    "cursor_blank": _one({"sessions": [_MAIN_ROW], "nextCursor": " \t\u3000"}),
    "cursor_repeat": lambda i: {
        "sessions": [row(f"{SUB}r{i}", parentSessionId=MAIN)],
        "nextCursor": "c1",
    },
    "row_no_session_id": _one({"sessions": [{"cwd": "/w"}]}),
    "row_empty_session_id": _one({"sessions": [{"sessionId": "", "cwd": "/w"}]}),
    "row_session_id_number": _one({"sessions": [{"sessionId": 7, "cwd": "/w"}]}),
    "row_no_cwd": _one({"sessions": [{"sessionId": MAIN}]}),
    "row_cwd_number": _one({"sessions": [{"sessionId": MAIN, "cwd": 1}]}),
    "row_empty_cwd": _one({"sessions": [_MAIN_ROW, {"sessionId": SUB + "e", "cwd": ""}]}),
    "row_not_object": _one({"sessions": [_MAIN_ROW, [MAIN]]}),
    "sessions_not_array": _one({"sessions": {"0": _MAIN_ROW}}),
    "sessions_missing": _one({"nextCursor": None}),
    "page_array": _one([_MAIN_ROW]),
    "page_null": _one(None),
    "bad_second_page": lambda i: {"sessions": [_MAIN_ROW], "nextCursor": "c1"} if i == 0 else {},
    "pages_128": _finite(128),
    "pages_200": _finite(200),
    "pages_endless": _endless,
}

# Scenarios that differ only in what ``initialize`` answers (all serve the family pages).
CAPABILITIES: dict[str, JSON] = {
    "list_false": {"loadSession": True, "sessionCapabilities": {"list": False}},
    "list_true": {"loadSession": True, "sessionCapabilities": {"list": True}},
    "list_string": {"loadSession": True, "sessionCapabilities": {"list": "yes"}},
    "list_array": {"loadSession": True, "sessionCapabilities": {"list": []}},
    "list_number": {"loadSession": True, "sessionCapabilities": {"list": 1}},
    "list_null": {"loadSession": True, "sessionCapabilities": {"list": None}},
    "no_session_capabilities": {"loadSession": True},
    "no_load": {"sessionCapabilities": LIST_CAPS},
    "load_false": {"loadSession": False, "sessionCapabilities": LIST_CAPS},
    "load_zero": {"loadSession": 0, "sessionCapabilities": LIST_CAPS},
    "load_truthy_string": {"loadSession": "yes", "sessionCapabilities": LIST_CAPS},
}
DEFAULT_CAPABILITIES: JSON = {"loadSession": True, "sessionCapabilities": LIST_CAPS}


class CraftedAgent:
    def __init__(self, scenario: str, log_path: str | None) -> None:
        self.scenario = scenario
        self.log_path = log_path
        self.pages = PAGES.get(scenario, PAGES["family"])
        self.loaded: str | None = None

    def log(self, direction: str, message: JSON) -> None:
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as log:
                log.write(json.dumps({direction: message}) + "\n")

    def earlier_initializes(self) -> int:
        if not self.log_path or not os.path.exists(self.log_path):
            return 0
        with open(self.log_path, encoding="utf-8") as log:
            return sum('"method": "initialize"' in line for line in log)

    def send(self, message: JSON) -> None:
        self.log("out", message)
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def handle(self, method: str, params: JSON) -> JSON:
        """The result, or raise ``Failure``."""
        if method == "initialize":
            return self.initialize()
        if method == "session/list":
            return self.list_sessions(params)
        if method == "session/load":
            self.loaded = params["sessionId"]
            return {}
        if method == "session/prompt":
            if params["sessionId"] != self.loaded:
                raise Failure(-32002, "Resource not found")
            return {"stopReason": "end_turn"}
        raise Failure(-32601, "Method not found")

    def initialize(self) -> JSON:
        if self.scenario == "exit_on_init":
            sys.exit(3)
        if self.scenario == "init_error" or (
            self.scenario == "init_fail_once" and self.earlier_initializes() == 1
        ):
            raise Failure(-32603, "Internal error", {"details": "gateway unavailable"})
        capabilities = CAPABILITIES.get(self.scenario, DEFAULT_CAPABILITIES)
        return {"protocolVersion": 1, "agentCapabilities": capabilities, "authMethods": []}

    def list_sessions(self, params: JSON) -> JSON:
        if self.scenario == "list_error":
            raise Failure(-32603, "Internal error", {"details": "gateway said no"})
        if self.scenario == "exit_on_list":
            sys.exit(7)
        cursor = params.get("cursor")
        if cursor is None:
            return self.pages(0)
        if not isinstance(cursor, str) or not cursor.startswith("c"):
            raise Failure(-32602, "Invalid params", {"details": "Invalid ACP session list cursor."})
        return self.pages(int(cursor[1:]))

    def serve(self) -> None:
        self.log("pid", os.getpid())
        for line in sys.stdin:
            message = json.loads(line)
            self.log("in", message)
            if "id" not in message or "method" not in message:
                continue
            try:
                result = self.handle(message["method"], message.get("params") or {})
            except Failure as failure:
                self.send({"jsonrpc": "2.0", "id": message["id"], "error": failure.error})
            else:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})


class Failure(Exception):
    def __init__(self, code: int, message: str, data: JSON = None) -> None:
        super().__init__(message)
        self.error: JSON = {"code": code, "message": message}
        if data is not None:
            self.error["data"] = data


if __name__ == "__main__":
    CraftedAgent(
        os.environ.get("CRAFTED_SCENARIO", "family"), os.environ.get("CRAFTED_LOG")
    ).serve()
