"""The lineage value type: where a session sits in its family tree."""

from __future__ import annotations

from dataclasses import dataclass

from clawline.types import JSONObject

PATH_SEPARATOR = "/"
"""Separator of the display form ``/<root>/…/<key>``."""


def format_path(keys: tuple[str, ...]) -> str:
    """``("a", "b")`` → ``"/a/b"``."""
    return "".join(PATH_SEPARATOR + key for key in keys)


@dataclass(frozen=True, slots=True)
class Lineage:
    """A session's place in its tree.

    ``path`` holds every key from the root down to the session itself, so ``path[0]`` is the
    root, ``path[-1]`` the session, ``parent`` is ``path[-2]`` (``None`` for a root) and
    ``depth`` is ``len(path) - 1`` (a root has depth 0).
    """

    path: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.path:
            raise ValueError("a lineage path holds at least the session itself")

    @property
    def key(self) -> str:
        return self.path[-1]

    @property
    def root(self) -> str:
        return self.path[0]

    @property
    def parent(self) -> str | None:
        return self.path[-2] if len(self.path) > 1 else None

    @property
    def depth(self) -> int:
        return len(self.path) - 1

    @property
    def path_string(self) -> str:
        return format_path(self.path)

    def to_json(self) -> JSONObject:
        """The stable ``lineage`` object of JSON output: ``{parent, path, depth}``."""
        return {"parent": self.parent, "path": self.path_string, "depth": self.depth}
