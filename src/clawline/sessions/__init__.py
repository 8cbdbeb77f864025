"""Sessions: the catalog (:mod:`clawline.sessions.catalog`, the one domain service that writes
sessions), its change rules (:mod:`~clawline.sessions.changes`, :mod:`~clawline.sessions.labels`)
and the listing rows (:mod:`~clawline.sessions.listing_rows`). The values themselves — entries and
transcript events — are records (:mod:`clawline.records`)."""

from clawline.sessions.catalog import (
    CatalogPage,
    CatalogTransaction,
    Cause,
    Change,
    SessionCatalog,
)

__all__ = ["CatalogPage", "CatalogTransaction", "Cause", "Change", "SessionCatalog"]
