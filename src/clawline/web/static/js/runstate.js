// Run state from the gateway catalog only (ClawX's projection; docs/web.md):
// the run projection of a row, the attention store (observedBusy / unread, persisted), and the
// in-memory set of sub-agent keys that were busy when the user opened them.

const TERMINAL = new Set([
  "done", "failed", "timeout", "killed", "completed", "finished", "error", "aborted", "cancelled",
]);

/** "busy" | "idle" | "unknown" from a row's `status` and `hasActiveRun`, nothing else. */
export function projectRunState(row) {
  if (!row) return "unknown";
  const status = typeof row.status === "string" ? row.status.trim().toLowerCase() : "";
  if (TERMINAL.has(status)) return "idle";
  if (typeof row.hasActiveRun === "boolean") return row.hasActiveRun ? "busy" : "idle";
  if (status === "running") return "busy";
  return "unknown";
}

/** `agent:<agentId>:subagent:<childId>`: exactly four parts, neither id empty. */
export function isNativeSubagentKey(key) {
  if (typeof key !== "string") return false;
  const parts = key.split(":");
  return parts.length === 4 && parts[0] === "agent" && parts[1] !== "" && parts[2] === "subagent"
    && parts[3] !== "";
}

/** `agent:<id>:cron:<job>:run:<run>`: run-scoped cron keys are never tracked. */
export function isCronRunKey(key) {
  const parts = String(key).split(":");
  return parts[0] === "agent" && parts[2] === "cron" && parts[4] === "run";
}

const ATTENTION_KEY = "clawline.session-attention";
const ATTENTION_VERSION = 1;

/** Per exact key `{observedBusy, unread}`; only `bySessionKey` is persisted (localStorage). */
export class Attention {
  constructor(storage = safeStorage()) {
    this.storage = storage;
    this.bySessionKey = new Map(Object.entries(this.load()));
  }

  load() {
    try {
      const saved = JSON.parse(this.storage?.getItem(ATTENTION_KEY) ?? "null");
      if (saved?.version === ATTENTION_VERSION && saved.state?.bySessionKey) {
        return saved.state.bySessionKey;
      }
    } catch {
      // unreadable: start empty
    }
    return {};
  }

  save() {
    const state = { bySessionKey: Object.fromEntries(this.bySessionKey) };
    try {
      this.storage?.setItem(ATTENTION_KEY, JSON.stringify({ state, version: ATTENTION_VERSION }));
    } catch {
      // storage full or disabled: attention lasts for this page only
    }
  }

  get(key) {
    return this.bySessionKey.get(key) ?? { observedBusy: false, unread: false };
  }

  /** Apply a row's projection; `visibleKey` is the conversation on screen. */
  reconcile(key, projection, visibleKey) {
    if (isCronRunKey(key) || projection === "unknown") return;
    const entry = this.get(key);
    let next = entry;
    if (projection === "busy") next = { ...entry, observedBusy: true };
    else if (entry.observedBusy) next = { observedBusy: false, unread: key !== visibleKey };
    if (next !== entry) this.put(key, next);
  }

  markRead(key) {
    const entry = this.get(key);
    if (entry.unread) this.put(key, { ...entry, unread: false });
  }

  /** Only an exact delete prunes an entry (rows missing from a list do not). */
  remove(key) {
    if (this.bySessionKey.delete(key)) this.save();
  }

  put(key, entry) {
    this.bySessionKey.set(key, entry);
    this.save();
  }
}

function safeStorage() {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

/** Busy: projection busy, or unknown while attention saw it busy (the observed-busy fallback). */
export function isBusy(row, attention) {
  const projection = projectRunState(row);
  if (projection === "busy") return true;
  return projection === "unknown" && row !== undefined && attention.get(row.key).observedBusy;
}

/** Keys of sub-agents that were busy when the user selected them (module-level, not saved). */
export const activeSubagentKeys = new Set();
