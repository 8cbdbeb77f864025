"""The app thread ↔ OpenClaw session mapping, kept in the session's plugin extensions.

Stored at ``pluginExtensions["openclaw-multi-session-plugins"]["xworkmate.sessionMapping"]`` of
the session the OpenClaw key names::

    {schemaVersion:1, appThreadKey, openclawSessionKey, expectedArtifactDirs, createdAt,
     updatedAt, source:"session_start"|"bridge_prepare"}

**Fail closed**: a session whose mapping names another app thread or another OpenClaw key is
never re-pointed (``conflict: xworkmate session mapping already points to a different session``,
code ``CONFLICT``), checked and written in one store transaction. A compatible mapping keeps
``createdAt`` and ``source``, takes the new ``expectedArtifactDirs`` and bumps ``updatedAt``.
The OpenClaw key is stored verbatim (the app key and the OpenClaw key differ and
``safeScopeSegment`` is one-way, so this is the only link back). Lookup by app key is an index
lookup (:meth:`PluginHost.find_sessions <clawline.plugins.host.PluginHost.find_sessions>`), not
a scan.

The functions here are blocking; call them on a store worker (``host.run``).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawline.errors import ClawlineError
from clawline.types import JSON, JSONObject
from clawline.xworkmate.constants import MAPPING_NAMESPACE, PLUGIN_ID
from clawline.xworkmate.open_params import XWorkmateConflict, XWorkmateError, optional_string
from clawline.xworkmate.scope import normalize_expected_dirs

if TYPE_CHECKING:
    from clawline.clock import Clock
    from clawline.plugins.host import PluginHost

CONFLICT_MESSAGE = "conflict: xworkmate session mapping already points to a different session"
SOURCES = ("session_start", "bridge_prepare")


def iso_now(clock: Clock) -> str:
    """Now as JavaScript's ``toISOString()`` writes it (``2026-06-05T12:00:00.000Z``)."""
    moment = datetime.datetime.fromtimestamp(clock.now_ms() / 1000, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass(frozen=True, slots=True)
class SessionMapping:
    app_thread_key: str
    openclaw_session_key: str
    expected_artifact_dirs: list[str]
    created_at: str
    updated_at: str
    source: str

    def to_json(self) -> JSONObject:
        dirs: list[JSON] = list(self.expected_artifact_dirs)
        return {
            "schemaVersion": 1,
            "appThreadKey": self.app_thread_key,
            "openclawSessionKey": self.openclaw_session_key,
            "expectedArtifactDirs": dirs,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "source": self.source,
        }

    @classmethod
    def from_json(cls, raw: object) -> SessionMapping | None:
        """A stored mapping, or ``None`` when ``raw`` is not a usable version-1 mapping."""
        if not isinstance(raw, dict) or raw.get("schemaVersion") != 1:
            return None
        app_key = optional_string(raw.get("appThreadKey"))
        session_key = optional_string(raw.get("openclawSessionKey"))
        if not app_key or not session_key:
            return None
        try:
            dirs = normalize_expected_dirs(raw.get("expectedArtifactDirs"))
        except XWorkmateError:
            dirs = []
        created = optional_string(raw.get("createdAt")) or "1970-01-01T00:00:00.000Z"
        source = optional_string(raw.get("source"))
        return cls(
            app_thread_key=app_key,
            openclaw_session_key=session_key,
            expected_artifact_dirs=dirs,
            created_at=created,
            updated_at=optional_string(raw.get("updatedAt")) or created,
            source=source if source in SOURCES else "bridge_prepare",
        )


def storage_key(openclaw_session_key: str, *, host: PluginHost) -> str:
    """The catalog key of the session an OpenClaw key names (``main`` → ``agent:main:main``)."""
    return host.canonical(openclaw_session_key)


def upsert_mapping(
    *,
    host: PluginHost,
    app_thread_key: str,
    openclaw_session_key: str,
    expected_artifact_dirs: list[str],
    source: str,
    created_at: str | None = None,
    create: bool = True,
) -> SessionMapping:
    """Write the mapping (creating the session when ``create``); raise
    :class:`XWorkmateConflict` when the session is mapped to another thread or key."""
    now = iso_now(host.clock)
    written: list[SessionMapping] = []

    def update(current: JSON | None) -> JSON | None:
        existing = SessionMapping.from_json(current)
        if existing is not None:
            if (
                existing.app_thread_key != app_thread_key
                or existing.openclaw_session_key != openclaw_session_key
            ):
                raise XWorkmateConflict(CONFLICT_MESSAGE)
            mapping = SessionMapping(
                app_thread_key=existing.app_thread_key,
                openclaw_session_key=existing.openclaw_session_key,
                expected_artifact_dirs=expected_artifact_dirs,
                created_at=existing.created_at,
                updated_at=now,
                source=existing.source,
            )
        else:
            mapping = SessionMapping(
                app_thread_key=app_thread_key,
                openclaw_session_key=openclaw_session_key,
                expected_artifact_dirs=expected_artifact_dirs,
                created_at=created_at or now,
                updated_at=now,
                source=source,
            )
        written[:] = [mapping]
        return mapping.to_json()

    host.update_extension(
        storage_key(openclaw_session_key, host=host),
        PLUGIN_ID,
        MAPPING_NAMESPACE,
        update,
        create=create,
    )
    return written[0]


def read_mapping(openclaw_session_key: str, *, host: PluginHost) -> SessionMapping | None:
    """The mapping stored on the session ``openclaw_session_key`` names, if any."""
    try:
        key = storage_key(openclaw_session_key, host=host)
    except ClawlineError:
        return None
    return SessionMapping.from_json(host.read_extension(key, PLUGIN_ID, MAPPING_NAMESPACE))


def find_mapping(app_thread_key: str, *, host: PluginHost) -> SessionMapping | None:
    """The mapping of an app thread (indexed lookup); with several, the latest updated."""
    found: list[SessionMapping] = []
    keys = host.find_sessions(PLUGIN_ID, MAPPING_NAMESPACE, "appThreadKey", app_thread_key)
    for key in keys:
        raw = host.read_extension(key, PLUGIN_ID, MAPPING_NAMESPACE)
        mapping = SessionMapping.from_json(raw)
        if mapping is not None and mapping.app_thread_key == app_thread_key:
            found.append(mapping)
    return max(found, key=lambda m: m.updated_at, default=None)
