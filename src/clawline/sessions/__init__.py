"""Sessions: entries, labels, change rules, transcripts and the catalog service.

The catalog (:mod:`clawline.sessions.catalog`) sits above the store and is imported from its
module; this package's top level holds only the value types the store also uses.
"""

from clawline.sessions.entry import CORE_FIELDS, LINEAGE_FIELDS, SessionEntry
from clawline.sessions.transcript import TranscriptEvent, TranscriptInfo

__all__ = [
    "CORE_FIELDS",
    "LINEAGE_FIELDS",
    "SessionEntry",
    "TranscriptEvent",
    "TranscriptInfo",
]
