"""The records clawline keeps: plain values with their invariants, and nothing else.

Session entries and their lineage, transcript events, tasks, the collaboration records (sub-agent
runs, inbox items, thread bindings), run idempotency keys and device pairings. The store persists
them and the domain services decide about them; both import them from here, so this package
imports no other part of clawline but the base modules (keys, errors, types).
"""
