"""Lineage: parent resolution, path from the root, depth, root, family and tree.

Lineage lives in one place, the session row. A session's path from its root is fixed when its
parent is set, so it survives the deletion of any ancestor (deletion never cascades).
"""

from clawline.lineage.tree import (
    Family,
    TreeNode,
    build_forest,
    family,
    lineage_parent,
    tree_of,
)
from clawline.records.lineage import Lineage, format_path

__all__ = [
    "Family",
    "Lineage",
    "TreeNode",
    "build_forest",
    "family",
    "format_path",
    "lineage_parent",
    "tree_of",
]
