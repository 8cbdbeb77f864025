"""OpenClaw methods of features clawline does not have, answered with OpenClaw's own empty or
disabled shapes so that its Control UI shows an empty panel, not an error.

- ``question.list {}`` → ``{questions: []}`` (no agent asks the operator questions);
- ``progressCard.get {sessionKey, agentId?}`` → ``{card: null}`` (no progress cards);
- ``cron.status {}`` → the scheduler disabled: ``{enabled: false, triggersEnabled: false,
  storePath, storage, jobs: 0, nextWakeAtMs: null}``;
- ``cron.list`` → an empty page ``{jobs: [], total: 0, offset, limit, hasMore: false,
  nextOffset: null}``; ``cron.runs`` → ``{entries: [], total: 0, offset, limit,
  hasMore: false, nextOffset: null}``;
- ``environments.list`` → ``{environments: []}`` (no environments, workers or desktops: the
  Systems page shows no machines);
- ``plugins.catalog.browse`` → ``{items: []}`` (no plugin catalog: plugins come from the
  configuration);
- ``node.list {}`` → ``{ts, nodes: []}`` (no paired nodes: companion devices are an OpenClaw
  feature).

The params are OpenClaw's (closed), so a request the UI could send is accepted and a
malformed one is refused as it would be there.
"""

from __future__ import annotations

from clawline import keys
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import READ, WRITE
from clawline.types import JSON

methods = MethodRegistry()

_TEXT = P.string(min_len=1, max_len=512)
_SORT_DIR = P.string(choices=("asc", "desc"))
CRON_PAGE_MAX = 200
CRON_LIST_DEFAULT_LIMIT = 50
CRON_RUNS_DEFAULT_LIMIT = 50
_LIMIT = P.integer(min=1, max=CRON_PAGE_MAX)
_OFFSET = P.integer(min=0)
PROGRESS_CARD = {
    "sessionKey": P.string(required=True, min_len=1, max_len=keys.MAX_KEY_LENGTH),
    "agentId": _TEXT,
}
CRON_LIST = {
    "sessionKey": _TEXT,
    "sessionAgentId": _TEXT,
    "includeDisabled": P.boolean(),
    "limit": _LIMIT,
    "offset": _OFFSET,
    "query": P.string(max_len=1024),
    "enabled": P.string(choices=("all", "enabled", "disabled")),
    "scheduleKind": P.string(max_len=64),
    "lastRunStatus": P.string(max_len=64),
    "trigger": P.string(max_len=64),
    "sortBy": P.string(max_len=64),
    "sortDir": _SORT_DIR,
    "agentId": _TEXT,
    "compact": P.boolean(),
    "includeDeliveryPreviews": P.boolean(),
}
CRON_RUNS = {
    "agentId": _TEXT,
    "scope": P.string(choices=("job", "all")),
    "id": _TEXT,
    "jobId": _TEXT,
    "runId": _TEXT,
    "limit": _LIMIT,
    "offset": _OFFSET,
    "statuses": P.array(P.string(max_len=64), max_len=3),
    "status": P.string(max_len=64),
    "deliveryStatuses": P.array(P.string(max_len=64), max_len=4),
    "deliveryStatus": P.string(max_len=64),
    "query": P.string(max_len=1024),
    "sortDir": _SORT_DIR,
}


# question.* needs OpenClaw's operator.questions scope, which clawline does not grant; those
# methods are session writes in OpenClaw's scope table, so write is the nearest.
@methods.method("question.list", scope=WRITE, schema={})
async def question_list(call: Call) -> JSON:
    return {"questions": []}


@methods.method("progressCard.get", scope=READ, schema=PROGRESS_CARD)
async def progress_card_get(call: Call) -> JSON:
    return {"card": None}


@methods.method("cron.status", scope=READ, schema={})
async def cron_status(call: Call) -> JSON:
    location = call.gateway.store.location
    return {
        "enabled": False,
        "triggersEnabled": False,
        "storePath": location,
        "storage": call.gateway.store.backend,
        "jobs": 0,
        "nextWakeAtMs": None,
    }


ENVIRONMENTS_LIST = {
    "includeDesktopSetup": P.boolean(),
    "runtimeId": _TEXT,
    "projection": P.string(max_len=64),
}
PLUGINS_CATALOG_BROWSE = {
    "intent": P.string(max_len=64),
    "category": P.string(max_len=128),
    "query": P.string(max_len=1024),
    "searchSource": P.string(max_len=128),
    "cursor": P.string(max_len=1024),
    "pageSize": P.integer(min=1, max=CRON_PAGE_MAX),
}


def _empty_page(call: Call, items: str, default_limit: int) -> JSON:
    return {
        items: [],
        "total": 0,
        "offset": 0,
        "limit": call.params.get("limit", default_limit),
        "hasMore": False,
        "nextOffset": None,
    }


@methods.method("cron.list", scope=READ, schema=CRON_LIST)
async def cron_list(call: Call) -> JSON:
    return _empty_page(call, "jobs", CRON_LIST_DEFAULT_LIMIT)


@methods.method("cron.runs", scope=READ, schema=CRON_RUNS)
async def cron_runs(call: Call) -> JSON:
    return _empty_page(call, "entries", CRON_RUNS_DEFAULT_LIMIT)


@methods.method("environments.list", scope=READ, schema=ENVIRONMENTS_LIST)
async def environments_list(call: Call) -> JSON:
    return {"environments": []}


@methods.method("plugins.catalog.browse", scope=READ, schema=PLUGINS_CATALOG_BROWSE)
async def plugins_catalog_browse(call: Call) -> JSON:
    return {"items": []}


@methods.method("node.list", scope=READ, schema={})
async def node_list(call: Call) -> JSON:
    return {"ts": call.gateway.clock.now_ms(), "nodes": []}
