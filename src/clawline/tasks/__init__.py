"""The task registry: background work (sub-agent runs, ACP sessions, CLI and cron turns) with a
status, an owner and a history.

- :mod:`clawline.tasks.registry`: :class:`~clawline.tasks.registry.TaskRegistry`, the domain
  service that writes tasks (reads in :mod:`clawline.tasks.lookups`, input checks in
  :mod:`clawline.tasks.fields`);
- :mod:`clawline.tasks.sweeper`: retention and lost-task detection.

The task record, its statuses and the transition table are a record
(:mod:`clawline.records.task`).
"""
