"""The store interface of the gateway instances and of who answers for each run:
``store.instances`` / ``tx.instances`` (table ``gateway_instances``) and ``store.run_owners`` /
``tx.run_owners`` (table ``run_owners``), ``store.handoffs``/``tx.handoffs`` (``run_handoffs``)
and ``store.claims``/``tx.claims`` (``instance_claims``: ACP agent processes, channel
connections). The SQL is shared by the backends
(:mod:`clawline.store._instances_sql`); the lifecycle that uses it is :mod:`clawline.instances`.

Rows written through a transaction are stamped with the store's :attr:`Store.instance_id
<clawline.store.base.Store.instance_id>`: a run owner, like an active sub-agent record, belongs
to the process that wrote it.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

from clawline.records.instance import InstanceClaim, InstanceRecord, RunHandoff, RunOwner, RunStop
from clawline.types import JSONObject


class InstanceReads(abc.ABC):
    """``store.instances``."""

    @abc.abstractmethod
    def get(self, instance_id: str) -> InstanceRecord | None: ...

    @abc.abstractmethod
    def running(self) -> list[InstanceRecord]:
        """Every instance neither stopped nor taken over (lapsed ones included), oldest
        first."""

    @abc.abstractmethod
    def recent(self, limit: int) -> list[InstanceRecord]:
        """The ``limit`` most recently started instances, newest first."""


class InstanceWrites(abc.ABC):
    """``tx.instances``."""

    @abc.abstractmethod
    def register(self, record: InstanceRecord) -> None: ...

    @abc.abstractmethod
    def heartbeat(self, instance_id: str, at: int, url: str | None) -> bool:
        """Renew the lease (and record ``url`` when given); ``False`` when the instance was
        stopped or taken over meanwhile (its lease is gone for good)."""

    @abc.abstractmethod
    def stop(self, instance_id: str, at: int) -> None: ...

    @abc.abstractmethod
    def take_over(self, instance_id: str, by: str, at: int, *, lapsed_only: bool = True) -> bool:
        """Mark a running instance taken over by ``by``; with ``lapsed_only``, only when its
        lease ran out before ``at``. ``True`` for the one caller that took it."""


class RunOwnerReads(abc.ABC):
    """``store.run_owners``. A run is *answered for* while its owner is a running instance
    (registered, neither stopped nor taken over) — judged when the query runs, so an instance
    that registers meanwhile keeps what it accepts."""

    @abc.abstractmethod
    def unanswered(self, limit: int) -> list[RunOwner]:
        """Up to ``limit`` owners that no running instance is, oldest first."""

    @abc.abstractmethod
    def answered_sessions(self, session_keys: Sequence[str]) -> set[str]:
        """Those of ``session_keys`` with a run a running instance answers for."""

    @abc.abstractmethod
    def answered_runs(self, run_ids: Sequence[str]) -> set[str]:
        """Those of ``run_ids`` a running instance answers for."""

    @abc.abstractmethod
    def counts(self) -> dict[str, int]:
        """Runs answered for, by instance id."""

    @abc.abstractmethod
    def of_session(self, session_key: str) -> list[RunOwner]:
        """The session's runs that running instances answer for, oldest first."""


class RunOwnerWrites(abc.ABC):
    """``tx.run_owners``."""

    @abc.abstractmethod
    def add(self, run_id: str, session_key: str, at: int, instance_id: str | None = None) -> None:
        """``instance_id`` (default: this transaction's instance) answers for ``run_id``
        (idempotent: a second add moves it)."""

    @abc.abstractmethod
    def session_owner(self, session_key: str, *, besides: str | None) -> str | None:
        """A running instance other than ``besides`` answering for a run of the session (the
        one with its oldest run), if any."""

    @abc.abstractmethod
    def remove(self, run_ids: Sequence[str]) -> int: ...


class HandoffReads(abc.ABC):
    """``store.handoffs``: runs accepted on one instance for another to run."""

    @abc.abstractmethod
    def pending_for(self, instance_id: str, limit: int) -> list[RunHandoff]: ...


class HandoffWrites(abc.ABC):
    """``tx.handoffs``."""

    @abc.abstractmethod
    def add(
        self, run_id: str, session_key: str, target_instance: str, at: int, request: JSONObject
    ) -> None: ...

    @abc.abstractmethod
    def claim(self, instance_id: str, limit: int) -> list[RunHandoff]:
        """Take (delete and return) up to ``limit`` of the instance's handoffs, oldest first;
        rows another transaction is claiming are skipped, not waited for."""

    @abc.abstractmethod
    def drop_unanswered(self) -> list[RunHandoff]:
        """Delete and return the handoffs whose target is no running instance (recovery)."""


class RunStopWrites(abc.ABC):
    """``tx.run_stops``: aborts of runs another instance runs."""

    @abc.abstractmethod
    def add(self, session_key: str, run_id: str | None, target_instance: str, at: int) -> None: ...

    @abc.abstractmethod
    def claim(self, instance_id: str, limit: int) -> list[RunStop]:
        """Take (delete and return) up to ``limit`` of the instance's stops, oldest first;
        rows another transaction is claiming are skipped, not waited for."""

    @abc.abstractmethod
    def drop_unanswered(self) -> int:
        """Delete the stops whose target is no running instance (recovery); how many."""


class ClaimReads(abc.ABC):
    """``store.claims``: what each instance holds besides runs (:class:`InstanceClaim`)."""

    @abc.abstractmethod
    def held_by(self, instance_id: str, kind: str) -> list[InstanceClaim]: ...

    @abc.abstractmethod
    def unanswered(self, kind: str, limit: int) -> list[InstanceClaim]:
        """Up to ``limit`` claims of ``kind`` whose instance is no running one, oldest first."""

    @abc.abstractmethod
    def holder(self, kind: str, name: str) -> str | None:
        """The running instance holding ``kind``/``name``, if any."""

    @abc.abstractmethod
    def counts(self) -> dict[str, dict[str, int]]:
        """Claims by instance id, then by kind."""


class ClaimWrites(abc.ABC):
    """``tx.claims``; claims are taken for this transaction's instance."""

    @abc.abstractmethod
    def take(self, kind: str, name: str, at: int) -> bool:
        """Hold ``kind``/``name`` unless a running instance other than this one does; whether
        this instance holds it now."""

    @abc.abstractmethod
    def release(self, kind: str, names: Sequence[str]) -> int:
        """Give up those of ``names`` this instance holds; how many it held."""
