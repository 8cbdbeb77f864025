"""Lineage: parent resolution, path from the root, depth, root, family and tree.

Lineage lives in one place, the session row. A session's path from its root is fixed when its
parent is set, so it survives the deletion of any ancestor (deletion never cascades).
"""
