"""Device pairing: which device identities a ``require_device`` gateway gives scopes to.

Modules: ``model`` (the record, statuses, errors), ``codes`` (one-time pairing codes),
``registry`` (the rules: admitting a connecting device, approving, revoking, listing). The rows
live in the store (``store.pairings``), so the CLI and every gateway on one store agree. See
docs/security.md, "Device pairing".
"""
