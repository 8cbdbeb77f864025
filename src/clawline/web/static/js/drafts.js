// Unsent text per conversation, kept in sessionStorage (this tab only, like the token) so a
// reload or a gateway restart never loses what was typed. The first screen's box (no
// conversation yet) is kept under NEW_CHAT. A draft is cleared only once the gateway accepted
// its message (docs/web.md).

const STORAGE_KEY = "clawline.drafts";
const VERSION = 1;
const MAX_DRAFTS = 100;

/** The key of the first screen's draft (a new chat that does not exist yet). */
export const NEW_CHAT = "";

export class Drafts {
  constructor(storage = safeStorage()) {
    this.storage = storage;
    this.bySessionKey = new Map(Object.entries(this.load()));
  }

  load() {
    try {
      const saved = JSON.parse(this.storage?.getItem(STORAGE_KEY) ?? "null");
      if (saved?.version === VERSION && saved.bySessionKey && typeof saved.bySessionKey === "object") {
        return Object.fromEntries(
          Object.entries(saved.bySessionKey).filter(([, text]) => typeof text === "string"),
        );
      }
    } catch {
      // unreadable: start empty
    }
    return {};
  }

  save() {
    const entries = [...this.bySessionKey].slice(-MAX_DRAFTS);
    this.bySessionKey = new Map(entries);
    try {
      this.storage?.setItem(STORAGE_KEY, JSON.stringify({ version: VERSION, bySessionKey: Object.fromEntries(entries) }));
    } catch {
      // storage full or disabled: drafts last for this page only
    }
  }

  /** The draft of `key` (NEW_CHAT for the first screen), "" when there is none. */
  get(key) {
    return this.bySessionKey.get(key ?? NEW_CHAT) ?? "";
  }

  set(key, text) {
    const name = key ?? NEW_CHAT;
    if (this.get(name) === text) return;
    this.bySessionKey.delete(name);
    if (text.trim()) this.bySessionKey.set(name, text);
    this.save();
  }

  /** Forget `key`'s draft if it is still `text` (what was just sent), or in any case. */
  clear(key, text = undefined) {
    const name = key ?? NEW_CHAT;
    if (!this.bySessionKey.has(name)) return;
    if (text !== undefined && this.get(name) !== text) return;
    this.bySessionKey.delete(name);
    this.save();
  }

  /** Hand the first screen's draft to the conversation just created for it. */
  move(from, to) {
    const text = this.get(from);
    if (!text || this.get(to)) return;
    this.bySessionKey.delete(from ?? NEW_CHAT);
    this.set(to, text);
  }
}

function safeStorage() {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}
