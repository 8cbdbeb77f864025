"""What the configuration says about agents and models: ``agents.list``,
``agent.identity.get`` and ``models.list`` (OpenClaw's shapes).

- ``agents.list {}`` → ``{defaultId, mainKey, scope, agents: [{id, name?, identity?,
  workspace, model: {primary}}]}``: the ``[[agents.list]]`` entries in their order, else the
  default agent alone; ``scope`` is ``"per-sender"`` (clawline keeps a session per sender).
- ``agent.identity.get {agentId?, sessionKey?}`` → ``{agentId, name, nameSource, avatar,
  avatarStatus}``: the agent of ``sessionKey``, else ``agentId``, else the default agent; the
  name is the entry's ``name`` (``nameSource: "agent"``) or OpenClaw's default ``Assistant``.
- ``models.list`` → ``{models: [{id, name, provider}]}``: the offline model, then every
  ``<provider>/<model>`` an agent is configured with, each once; ``provider`` narrows it.
"""

from __future__ import annotations

from clawline import keys
from clawline.config.schema import AgentsConfig
from clawline.gateway.frames import GatewayError
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import READ
from clawline.types import JSON, JSONObject

methods = MethodRegistry()

OFFLINE_MODEL = "offline"
SESSION_SCOPE = "per-sender"
DEFAULT_ASSISTANT_NAME = "Assistant"
DEFAULT_ASSISTANT_AVATAR = "A"

_ID = P.string(min_len=1, max_len=128)
IDENTITY = {"agentId": _ID, "sessionKey": P.string(max_len=keys.MAX_KEY_LENGTH)}
MODELS = {
    "agentId": _ID,
    "sessionKey": P.string(min_len=1, max_len=keys.MAX_KEY_LENGTH),
    "authProfileId": P.string(min_len=1, max_len=256),
    "provider": _ID,
    "includeDetails": P.boolean(),
    "includeProviderCapabilities": P.boolean(),
    "includeDefaultModels": P.boolean(),
    "preparedOnly": P.boolean(),
    "refresh": P.boolean(),
    "view": P.string(choices=("default", "configured", "provider-config", "all")),
}


def _agent_ids(call: Call) -> list[str]:
    configured = call.gateway.runs.config.agent_ids()
    return configured or [call.gateway.catalog.default_agent_id]


def _summary(config: AgentsConfig, agent_id: str) -> JSONObject:
    agent = config.resolve_agent(agent_id)
    summary: JSONObject = {"id": agent_id}
    entry = config.agents.get(agent_id)
    if entry is not None and entry.name:
        summary["name"] = entry.name
        summary["identity"] = {"name": entry.name}
    summary["workspace"] = str(agent.workspace)
    summary["model"] = {"primary": agent.model}
    return summary


@methods.method("agents.list", scope=READ, schema={})
async def agents_list(call: Call) -> JSON:
    catalog = call.gateway.catalog
    config = call.gateway.runs.config
    agents: list[JSON] = [_summary(config, agent_id) for agent_id in _agent_ids(call)]
    return {
        "defaultId": catalog.default_agent_id,
        "mainKey": catalog.main_key,
        "scope": SESSION_SCOPE,
        "agents": agents,
    }


@methods.method("agent.identity.get", scope=READ, schema=IDENTITY)
async def agent_identity_get(call: Call) -> JSON:
    catalog = call.gateway.catalog
    agent_raw = (call.params.get("agentId") or "").strip()
    agent_id = keys.normalize_agent_id(agent_raw) if agent_raw else None
    session_key = (call.params.get("sessionKey") or "").strip()
    if session_key:
        owner = keys.agent_id_of(catalog.canonical(session_key), catalog.default_agent_id)
        if agent_id is not None and owner != agent_id:
            raise GatewayError(f'agent "{agent_id}" does not match session key agent "{owner}"')
        agent_id = owner
    agent_id = agent_id or catalog.default_agent_id
    entry = call.gateway.runs.config.agents.get(agent_id)
    named = entry is not None and bool(entry.name and entry.name.strip())
    return {
        "agentId": agent_id,
        "name": entry.name.strip() if named and entry and entry.name else DEFAULT_ASSISTANT_NAME,
        "nameSource": "agent" if named else "default",
        "avatar": DEFAULT_ASSISTANT_AVATAR,
        "avatarStatus": "none",
    }


def configured_models(config: AgentsConfig, agent_ids: list[str]) -> list[JSONObject]:
    """The offline model, then each agent's configured model, each once."""
    refs = [config.defaults.model]
    refs += [config.resolve_agent(agent_id).model for agent_id in agent_ids]
    models: dict[tuple[str, str], JSONObject] = {
        (OFFLINE_MODEL, OFFLINE_MODEL): {
            "id": OFFLINE_MODEL,
            "name": OFFLINE_MODEL,
            "provider": OFFLINE_MODEL,
        }
    }
    for ref in refs:
        provider, _, name = ref.partition("/")
        if not name:
            continue
        models.setdefault((provider, name), {"id": name, "name": name, "provider": provider})
    return list(models.values())


@methods.method("models.list", scope=READ, schema=MODELS)
async def models_list(call: Call) -> JSON:
    params = call.params
    if params.get("preparedOnly") and params.get("refresh"):
        raise GatewayError(
            "invalid models.list params: preparedOnly and refresh cannot be combined"
        )
    if "sessionKey" in params and "authProfileId" in params:
        raise GatewayError(
            "invalid models.list params: sessionKey and authProfileId cannot be combined"
        )
    if "agentId" in params:
        keys.normalize_agent_id(params["agentId"])
    provider = params.get("provider")
    models = configured_models(call.gateway.runs.config, _agent_ids(call))
    listed: list[JSON] = [
        model for model in models if provider is None or model["provider"] == provider
    ]
    return {"models": listed}
