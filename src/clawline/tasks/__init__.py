"""The task registry: background work (sub-agent runs, ACP sessions, CLI and cron turns) with a
status, an owner and a history.

- :mod:`clawline.tasks.model`: :class:`TaskRecord`, statuses and the transition table;
- :mod:`clawline.tasks.registry`: :class:`TaskRegistry`, the domain service that writes tasks
  (reads in :mod:`clawline.tasks.lookups`, input checks in :mod:`clawline.tasks.fields`);
- :mod:`clawline.tasks.sweeper`: retention and lost-task detection.

Only the model is imported here: the store imports it, and the registry imports the store.
"""

from clawline.tasks.model import (
    InvalidTaskTransition,
    TaskEvent,
    TaskNotFound,
    TaskRecord,
)

__all__ = ["InvalidTaskTransition", "TaskEvent", "TaskNotFound", "TaskRecord"]
