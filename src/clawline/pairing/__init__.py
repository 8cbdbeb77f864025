"""Device pairing: which device identities a ``require_device`` gateway gives scopes to.

Modules: ``codes`` (one-time pairing codes) and ``registry`` (the rules: admitting a connecting
device, approving, revoking, listing); the record, its statuses and errors are
:mod:`clawline.records.pairing`. The rows live in the store (``store.pairings``), so the CLI and
every gateway on one store agree. See docs/security.md, "Device pairing".
"""
