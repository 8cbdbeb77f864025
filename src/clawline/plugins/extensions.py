"""Plugin extensions on sessions: ``pluginExtensions[pluginId][namespace]``, read and written
through the catalog, and found again by value through an index.

All three functions are blocking store work over the session catalog: call them on a store
worker. A plugin reaches them through its host (:class:`~clawline.plugins.host.PluginHost`),
which binds the catalog::

    mapping = await host.run(host.read_extension, key, PLUGIN_ID, "mapping")

- :func:`update_extension` is one catalog transaction: it reads the current value, calls
  ``update`` with a copy of it, validates and writes the result (``None`` deletes the
  namespace), and replaces the session's rows of the reverse-lookup index, all or nothing.
  ``update`` may raise (a :class:`~clawline.errors.ClawlineError` to refuse): nothing is
  written. It does not touch ``updatedAt`` and publishes no event (the caller may, on the
  loop).
- :func:`find_sessions` answers "which sessions have ``field == value`` in this extension"
  with one index lookup. Every top-level string field of an extension value is indexed (up to
  512 characters; the bounds are in :mod:`clawline.store.extension_index`); a value beyond
  them is never found.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING

from clawline.errors import InvalidField, SessionNotFound
from clawline.records.session import SessionEntry
from clawline.types import JSON

if TYPE_CHECKING:
    from clawline.sessions.catalog import SessionCatalog


def _check_name(what: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise InvalidField(f"invalid {what}: must be a non-empty string")
    return value


def _value_of(entry: SessionEntry | None, plugin_id: str, namespace: str) -> JSON | None:
    if entry is None:
        return None
    return entry.plugin_extensions.get(plugin_id, {}).get(namespace)


def read_extension(
    session_key: str, plugin_id: str, namespace: str, *, catalog: SessionCatalog
) -> JSON | None:
    """The value (a copy), or ``None`` when the session or the namespace does not exist."""
    _check_name("plugin id", plugin_id)
    _check_name("namespace", namespace)
    entry = catalog.get(session_key)
    return copy.deepcopy(_value_of(entry, plugin_id, namespace))


def update_extension(
    session_key: str,
    plugin_id: str,
    namespace: str,
    update: Callable[[JSON | None], JSON | None],
    *,
    catalog: SessionCatalog,
    create: bool = False,
) -> JSON | None:
    """Replace the value with ``update(current)`` in one transaction; return the new value.

    ``create=True`` creates the session when it is missing (and ``update`` returns a value);
    otherwise a missing session raises :class:`~clawline.errors.SessionNotFound`.
    """
    _check_name("plugin id", plugin_id)
    _check_name("namespace", namespace)
    key = catalog.canonical(session_key)
    with catalog.transaction() as work:
        entry = work.tx.get(key)
        if entry is None and not create:
            raise SessionNotFound(f"session not found: {key}")
        current = _value_of(entry, plugin_id, namespace)
        value = update(copy.deepcopy(current))
        if value is None and current is None:
            return None
        change = work.patch(
            key,
            {"pluginExtensions": {plugin_id: {namespace: value}}},
            create=create,
            touch=False,
        )
    return copy.deepcopy(_value_of(change.after, plugin_id, namespace))


def find_sessions(
    plugin_id: str, namespace: str, field: str, value: str, *, catalog: SessionCatalog
) -> list[str]:
    """Keys of the sessions whose ``pluginExtensions[plugin_id][namespace][field] == value``,
    in key order."""
    _check_name("plugin id", plugin_id)
    _check_name("namespace", namespace)
    _check_name("field", field)
    if not isinstance(value, str):
        raise InvalidField("invalid value: only string fields are indexed")
    return catalog.store.sessions_by_extension(plugin_id, namespace, field, value)
