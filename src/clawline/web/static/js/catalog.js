// The client's session catalog: exact key → latest gateway row, from sessions.list pages,
// sessions.get answers and sessions.changed events merged by ClawX's
// rules (docs/web.md). It keeps sub-agent rows too: hiding them is the sidebar's business.

import { t } from "./i18n.js";
import { isCronRunKey } from "./runstate.js";

export class Catalog {
  constructor() {
    this.rows = new Map();
    this.newestTs = new Map();
  }

  has(key) {
    return this.rows.has(key);
  }

  get(key) {
    return this.rows.get(key);
  }

  values() {
    return [...this.rows.values()];
  }

  /** Forget everything (before a full re-list). */
  clear() {
    this.rows.clear();
    this.newestTs.clear();
  }

  /** Rows of a listing (or one sessions.get row) answered at gateway time `ts`. */
  putRows(rows, ts) {
    for (const row of rows) {
      if (!row || typeof row.key !== "string" || isCronRunKey(row.key)) continue;
      if (this.isStale(row.key, ts)) continue;
      this.rows.set(row.key, { ...this.rows.get(row.key), ...row });
      this.noteTs(row.key, ts);
    }
  }

  /**
   * Merge a sessions.changed payload. Returns `{key, change}` where change is "deleted",
   * "updated", "ignored" or "relist" (a nested snapshot disagrees with the envelope key).
   */
  applyChanged(payload) {
    const key = payload.sessionKey ?? payload.key;
    if (typeof key !== "string" || isCronRunKey(key)) return { key, change: "ignored" };
    const snapshot = payload.session && typeof payload.session === "object" ? payload.session : null;
    if (snapshot && snapshot.key !== undefined && snapshot.key !== key) {
      return { key, change: "relist" };
    }
    if (this.isStale(key, payload.ts)) return { key, change: "ignored" };
    this.noteTs(key, payload.ts);
    if (payload.reason === "delete") {
      this.rows.delete(key);
      return { key, change: "deleted" };
    }
    const existing = this.rows.get(key);
    if (!existing && !snapshot) return { key, change: "ignored" };
    const fields = snapshot ?? rowFieldsOf(payload);
    // Omitted fields stay; explicit null clears; false stays false.
    this.rows.set(key, { ...existing, ...fields, key });
    return { key, change: "updated" };
  }

  isStale(key, ts) {
    const newest = this.newestTs.get(key);
    return typeof ts === "number" && newest !== undefined && ts < newest;
  }

  noteTs(key, ts) {
    if (typeof ts === "number") this.newestTs.set(key, Math.max(ts, this.newestTs.get(key) ?? ts));
  }
}

const ENVELOPE = new Set([
  "sessionKey", "reason", "phase", "runId", "ts", "messageId", "messageSeq", "session", "message",
]);

function rowFieldsOf(payload) {
  const fields = {};
  for (const [name, value] of Object.entries(payload)) {
    if (!ENVELOPE.has(name)) fields[name] = value;
  }
  return fields;
}

/** What a row is called: label, display name, derived title, else the key. A chat without a
 * message yet is "New chat" in the UI language, not the gateway's stand-in title. */
export function rowTitle(row, key = row?.key) {
  for (const candidate of [row?.label, row?.displayName, row?.derivedTitle]) {
    if (typeof candidate !== "string" || !candidate.trim()) continue;
    return isStandInTitle(row, candidate) ? t("chat:sessionList.untitled") : candidate.trim();
  }
  return key ?? "";
}

/** The derived title the gateway gives a session with no first message:
 * `<sessionId[:8]> (YYYY-MM-DD)` (docs/web.md). */
export function isStandInTitle(row, title) {
  const id = typeof row?.sessionId === "string" ? row.sessionId.slice(0, 8) : "";
  if (!id || title !== row.derivedTitle) return false;
  return title.startsWith(`${id} (`) && /^\d{4}-\d{2}-\d{2}\)$/.test(title.slice(id.length + 2));
}
