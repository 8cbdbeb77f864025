"""Where the ``tasks`` commands get their data: the store (through the task registry) or, when
a gateway is configured (``CLAWLINE_GATEWAY_URL`` or ``[gateway] url``) and ``--local`` is not
given, the gateway's ``tasks.*`` methods. Both answer with the same types and errors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from clawline.cli.root import CliState
from clawline.client.blocking import BlockingGatewayClient
from clawline.client.client_errors import ClientError, GatewayRequestError
from clawline.errors import ClawlineError, InvalidInput, NotFound
from clawline.records.task import TaskEvent, TaskNotFound, TaskRecord
from clawline.sessions.catalog import SessionCatalog
from clawline.store import open_store
from clawline.tasks.lookups import TaskList
from clawline.tasks.registry import TaskRegistry
from clawline.types import JSON, JSONObject


@dataclass(frozen=True, slots=True)
class TaskDetail:
    task: TaskRecord
    events: list[TaskEvent]


@dataclass(frozen=True, slots=True)
class Cancellation:
    task: TaskRecord
    run_ids: list[str] = field(default_factory=list)
    """Runs aborted (only a gateway can abort a run)."""
    local: bool = False


class TasksBackend(Protocol):
    def list_page(
        self,
        *,
        status: str | None,
        runtime: str | None,
        owner_key: str | None,
        limit: int,
        cursor: str | None,
    ) -> TaskList: ...

    def show(self, token: str) -> TaskDetail: ...

    def cancel(self, task_id: str, reason: str | None) -> Cancellation: ...

    def close(self) -> None: ...


class LocalTasksBackend:
    def __init__(self, registry: TaskRegistry, catalog: SessionCatalog) -> None:
        self.registry = registry
        self.catalog = catalog

    def list_page(
        self,
        *,
        status: str | None,
        runtime: str | None,
        owner_key: str | None,
        limit: int,
        cursor: str | None,
    ) -> TaskList:
        return self.registry.list(
            status=status, runtime=runtime, owner_key=owner_key, limit=limit, cursor=cursor
        )

    def show(self, token: str) -> TaskDetail:
        task = self.registry.require_token(token, canonical=self.catalog.canonical)
        return TaskDetail(task=task, events=self.registry.events(task.task_id))

    def cancel(self, task_id: str, reason: str | None) -> Cancellation:
        return Cancellation(task=self.registry.cancel(task_id, reason=reason), local=True)

    def close(self) -> None:
        self.registry.store.close()


def _local_error(error: GatewayRequestError) -> ClawlineError:
    """The clawline error a refusal stands for (it decides the exit code), read from its
    category and class (``details.errorType``, ``details.errorClass``): a missing task is
    :class:`TaskNotFound` (exit 1), invalid input :class:`InvalidInput` (exit 2); a refusal of
    access (a missing scope, an unknown method) and every other category stay as they are
    (exit 1)."""
    details = error.details if isinstance(error.details, dict) else {}
    if error.category is NotFound:
        return TaskNotFound(error.message)
    if error.category is InvalidInput and details.get("errorClass") != "AccessRefused":
        return InvalidInput(error.message)
    return error


def _object(payload: JSON, name: str) -> Mapping[str, Any]:
    value = payload.get(name) if isinstance(payload, Mapping) else None
    if not isinstance(value, Mapping):
        raise ClientError(f"the gateway sent no {name} object")
    return value


class GatewayTasksBackend:
    def __init__(self, client: BlockingGatewayClient, *, timeout: float = 60.0) -> None:
        self.client = client
        self.timeout = timeout

    def _call(self, method: str, params: JSONObject) -> JSONObject:
        try:
            payload = self.client.request(method, params, timeout=self.timeout)
        except GatewayRequestError as error:
            raise _local_error(error) from None
        if not isinstance(payload, dict):
            raise ClientError(f"{method}: the gateway sent an unexpected answer")
        return payload

    def list_page(
        self,
        *,
        status: str | None,
        runtime: str | None,
        owner_key: str | None,
        limit: int,
        cursor: str | None,
    ) -> TaskList:
        params: JSONObject = {"limit": limit}
        for name, value in (
            ("status", status),
            ("runtime", runtime),
            ("ownerKey", owner_key),
            ("cursor", cursor),
        ):
            if value is not None:
                params[name] = value
        payload = self._call("tasks.list", params)
        rows = payload.get("tasks")
        if not isinstance(rows, list) or not all(isinstance(row, Mapping) for row in rows):
            raise ClientError("tasks.list: the gateway sent tasks that are not objects")
        following = payload.get("nextCursor")
        return TaskList(
            tasks=[TaskRecord.from_json(row) for row in rows],
            next_cursor=following if isinstance(following, str) and following else None,
        )

    def show(self, token: str) -> TaskDetail:
        payload = self._call("tasks.get", {"token": token})
        task = TaskRecord.from_json(_object(payload, "task"))
        events = payload.get("events")
        history = [
            TaskEvent(task.task_id, seq, e.get("at", 0), e.get("kind", ""), e.get("summary"))
            for seq, e in enumerate(events if isinstance(events, list) else [], start=1)
            if isinstance(e, Mapping)
        ]
        return TaskDetail(task=task, events=history)

    def cancel(self, task_id: str, reason: str | None) -> Cancellation:
        params: JSONObject = {"taskId": task_id}
        if reason is not None:
            params["reason"] = reason
        payload = self._call("tasks.cancel", params)
        run_ids = payload.get("runIds")
        return Cancellation(
            task=TaskRecord.from_json(_object(payload, "task")),
            run_ids=[str(r) for r in run_ids] if isinstance(run_ids, list) else [],
        )

    def close(self) -> None:
        self.client.close()


def open_tasks_backend(state: CliState) -> TasksBackend:
    """The gateway when one is configured (and ``--local`` was not given), else the store."""
    settings = state.settings
    if not state.local:
        from clawline.client.target import configured_gateway

        target = configured_gateway(settings, state.environment)
        if target is not None:
            from clawline.client.identity import load_or_create_identity

            device = load_or_create_identity(settings.state_dir)
            client = BlockingGatewayClient.connect(target.url, token=target.token, device=device)
            return GatewayTasksBackend(client)
    store = open_store(
        settings.store_url, default_sqlite_path=settings.sqlite_path, pool=settings.store_pool
    )
    catalog = SessionCatalog(
        store,
        clock=state.clock,
        default_agent_id=settings.default_agent_id,
        main_key=settings.main_key,
    )
    return LocalTasksBackend(TaskRegistry(store, clock=state.clock), catalog)
