// Lineage read from gateway catalog rows: a row's parent, its ancestors, the native sub-agent
// sessions whose parent is gone (the sidebar's "Orphaned subagents") and how many sub-agents
// of each conversation are running (the sidebar's busy cue). Presentation only: membership
// of the sub-agent panel still comes from ACP (family.js).

import { isNativeSubagentKey } from "./runstate.js";

const MAX_DEPTH = 32;

/** The parent key a row names (lineage, parentSessionKey, spawnedBy), or null. */
export function parentOf(row) {
  const parent = row?.lineage?.parent ?? row?.parentSessionKey ?? row?.spawnedBy ?? null;
  return typeof parent === "string" && parent !== "" && parent !== row?.key ? parent : null;
}

/** The keys above `row`, nearest first: its lineage path when the row has one, else the parent
 * chain through the catalog (bounded, cycle-safe). */
export function ancestorsOf(row, catalog) {
  const path = row?.lineagePath;
  if (Array.isArray(path) && path.length > 0 && path[path.length - 1] === row.key) {
    return path.slice(0, -1).reverse();
  }
  const out = [];
  const seen = new Set([row?.key]);
  let parent = parentOf(row);
  while (parent && !seen.has(parent) && out.length < MAX_DEPTH) {
    out.push(parent);
    seen.add(parent);
    parent = parentOf(catalog.get(parent));
  }
  return out;
}

/** Native sub-agent sessions the sidebar cannot otherwise reach: their parent is not in the
 * catalog (deleted) or unknown. Newest first. */
export function orphanKeys(catalog) {
  return catalog
    .values()
    .filter((row) => isNativeSubagentKey(row.key))
    .filter((row) => {
      const parent = parentOf(row);
      return !parent || !catalog.has(parent);
    })
    .sort((a, b) => (b.updatedAt ?? 0) - (a.updatedAt ?? 0) || (a.key < b.key ? 1 : -1))
    .map((row) => row.key);
}

/** key → number of running sub-agent sessions below it (every depth). */
export function runningDescendants(catalog, busyOf) {
  const counts = new Map();
  for (const row of catalog.values()) {
    if (!isNativeSubagentKey(row.key) || !busyOf(row.key)) continue;
    for (const ancestor of ancestorsOf(row, catalog)) {
      counts.set(ancestor, (counts.get(ancestor) ?? 0) + 1);
    }
  }
  return counts;
}
