// The selected conversation's family, from ACP via the gateway's web.family method
// (docs/web.md): loading with stale-response rejection, the
// sessions_spawn invalidation signal, visible children and title cleaning.

import { isNativeSubagentKey } from "./runstate.js";

export const SUBAGENT_CONTEXT = "[Subagent Context]";

/** Row label: a leading "[Subagent Context]" and the spaces after it removed; empty → key. */
export function cleanChildTitle(title, sessionKey) {
  let text = typeof title === "string" ? title : "";
  if (text.startsWith(SUBAGENT_CONTEXT)) text = text.slice(SUBAGENT_CONTEXT.length).trimStart();
  return text === "" ? sessionKey : text;
}

/** Window title: stripped only for a native sub-agent key whose title has the prefix. */
export function cleanWindowTitle(title, sessionKey) {
  if (isNativeSubagentKey(sessionKey) && title.startsWith(SUBAGENT_CONTEXT)) {
    return title.slice(SUBAGENT_CONTEXT.length).trimStart();
  }
  return title;
}

/**
 * Loads the family of the selected key. Every selection change bumps the request id, keeps
 * the loaded family only when it belongs to the new key, and requests it; an answer is applied
 * only if it is the latest request, the selection is still its key and it succeeded. Failures
 * are ignored silently (no family → no children, no marker).
 */
export class FamilyLoader {
  constructor(fetchFamily, onChange) {
    this.fetchFamily = fetchFamily;
    this.onChange = onChange;
    this.requestId = 0;
    this.selectedKey = null;
    this.familyKey = null;
    this.family = null;
  }

  select(key) {
    this.selectedKey = key;
    if (this.familyKey !== key) {
      this.family = null;
      this.familyKey = null;
    }
    this.onChange();
    if (key) this.request(key);
  }

  /** Ask again for the selected key (a spawn was accepted, the connection came back). */
  refresh() {
    if (this.selectedKey) this.request(this.selectedKey);
  }

  /** The loaded family of `key`, or null. */
  familyOf(key) {
    return this.familyKey === key ? this.family : null;
  }

  async request(key) {
    this.requestId += 1;
    const id = this.requestId;
    let result;
    try {
      result = await this.fetchFamily(key);
    } catch {
      return;
    }
    if (id !== this.requestId || this.selectedKey !== key || result?.success !== true) return;
    this.family = { current: result.current ?? null, children: result.children ?? [] };
    this.familyKey = key;
    this.onChange();
  }
}

/** The identity of an accepted sessions_spawn tool item, or null. */
export function spawnIdentity(item) {
  const name = String(item.title ?? "").split(":")[0].trim();
  if (name !== "sessions_spawn" || item.status !== "completed") return null;
  const details = item.details;
  if (!details || typeof details !== "object" || details.status !== "accepted") return null;
  const runId = typeof details.runId === "string" ? details.runId.trim() : "";
  const child = typeof details.childSessionKey === "string" ? details.childSessionKey.trim() : "";
  if (!runId || !child) return null;
  return `${item.toolCallId}\u0000${runId}\u0000${child}`;
}

export function spawnSignature(items) {
  return items.map(spawnIdentity).filter((identity) => identity !== null).join("\n");
}

/**
 * Tracks the signature per selected key. `observe` answers whether to refetch: only when the
 * signature changed for the same key, is non-empty, and the change came from live activity
 * (a session switch or a history load only records it).
 */
export class SpawnWatcher {
  constructor() {
    this.key = null;
    this.signature = "";
  }

  observe(key, items, { live }) {
    const signature = spawnSignature(items);
    if (key !== this.key) {
      this.key = key;
      this.signature = signature;
      return false;
    }
    if (signature === this.signature) return false;
    this.signature = signature;
    return live && signature !== "";
  }
}

/** Family children whose exact key the catalog has, in family order: {sessionKey, title, busy}. */
export function visibleChildren(family, catalog, busyOf) {
  if (!family) return [];
  return family.children
    .filter((child) => catalog.has(child.sessionKey))
    .map((child) => ({
      sessionKey: child.sessionKey,
      title: child.title,
      busy: busyOf(child.sessionKey),
    }));
}

/** The child view's state: marker and return target. */
export function childView(family, selectedKey, catalog) {
  const current = family?.current;
  if (!current || current.sessionKey !== selectedKey || !isNativeSubagentKey(selectedKey)) {
    return { isChild: false, returnTarget: null };
  }
  const parent = current.parentSessionKey;
  return { isChild: true, returnTarget: parent && catalog.has(parent) ? parent : null };
}
