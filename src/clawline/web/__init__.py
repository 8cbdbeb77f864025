"""clawline's web chat: a static page the gateway serves at ``/`` (``static/``: plain ES modules,
CSS and locale files, no build step) and the server side of its ``web.*`` gateway methods.

See docs/web.md.
"""

from __future__ import annotations

from pathlib import Path

STATIC_DIR = Path(__file__).resolve().parent / "static"
"""The page's files: ``index.html``, ``js/``, ``css/``, ``i18n/``."""

LOCALES = ("en", "zh", "ja", "ru")
"""The page's languages; each has ``static/i18n/<locale>.json`` with the same keys."""
