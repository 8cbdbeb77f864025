// The web chat's controller: the gateway connection, the catalog, the selected conversation
// and the actions the views call. Rendering is in view.js.

import { Catalog } from "./catalog.js";
import { Details } from "./details-data.js";
import { Drafts, NEW_CHAT } from "./drafts.js";
import { FamilyLoader, SpawnWatcher } from "./family.js";
import { GatewayConnection, gatewayUrl, randomKey } from "./gateway.js";
import { currentLocale, preferredLocale, setLocale } from "./i18n.js";
import { saveToken, savedToken } from "./login.js";
import { Attention, activeSubagentKeys, isBusy, isNativeSubagentKey, projectRunState } from "./runstate.js";
import { Timeline } from "./timeline.js";
import { View } from "./view.js";

const LIST_PAGE = 500;
const LIST_PAGES = 4;
const RETRY_MS = [500, 1000, 2000, 5000];

export class App {
  constructor(root) {
    this.catalog = new Catalog();
    this.attention = new Attention();
    this.family = new FamilyLoader((key) => this.request("web.family", { sessionKey: key }), () => this.onFamily());
    this.spawns = new SpawnWatcher();
    this.screen = "connecting"; // connecting | login | chat
    this.status = "connecting"; // connecting | connected | reconnecting
    this.selectedKey = null;
    this.timeline = null;
    this.panel = { key: null, which: null };
    this.detailsOpen = false;
    this.tasks = { key: null, items: [], artifacts: null };
    this.pendingRuns = new Map();
    this.methods = new Set();
    this.loginError = null;
    this.notice = null;
    this.retries = 0;
    this.retryTimer = null;
    this.attempting = false;
    this.unsent = false; // a send failed because the gateway was unreachable (the banner says so)
    this.drafts = new Drafts();
    this.details = new Details(this);
    this.view = new View(root, this);
  }

  async start() {
    await setLocale(preferredLocale());
    window.addEventListener("hashchange", () => this.onHashChange());
    this.view.render();
    await this.connect(savedToken());
  }

  async changeLocale(locale) {
    await setLocale(locale, { persist: true });
    this.view.render();
  }

  // --- connection -------------------------------------------------------------------------

  async connect(token) {
    if (this.attempting) return;
    this.attempting = true;
    try {
      await this.attempt(token);
    } finally {
      this.attempting = false;
    }
  }

  async attempt(token) {
    clearTimeout(this.retryTimer);
    this.status = this.connection ? "reconnecting" : this.status;
    const connection = new GatewayConnection({
      url: gatewayUrl(),
      token,
      locale: currentLocale(),
      onEvent: (name, payload) => this.onEvent(name, payload),
      onClose: () => this.onDisconnect(),
    });
    let hello;
    try {
      hello = await connection.open();
    } catch (error) {
      if (error.unauthorized) {
        saveToken(null);
        this.token = null;
        this.screen = "login";
        this.loginError = token ? error.message : null;
        this.view.render();
        return;
      }
      this.retryLater(token);
      return;
    }
    this.connection = connection;
    this.token = token;
    this.retries = 0;
    saveToken(token);
    this.methods = new Set(hello?.features?.methods ?? []);
    this.screen = "chat";
    this.status = "connected";
    this.unsent = false;
    this.loginError = null;
    try {
      await this.request("sessions.subscribe");
      await this.relist();
    } catch (error) {
      this.showNotice(error.message);
    }
    this.select(this.initialKey(), { force: true });
  }

  retryLater(token) {
    this.token = token;
    this.status = "reconnecting";
    this.view.render();
    const delay = RETRY_MS[Math.min(this.retries, RETRY_MS.length - 1)];
    this.retries += 1;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.connect(token), delay);
  }

  /** The banner's Retry: try at once instead of waiting for the next scheduled attempt. */
  retryNow() {
    if (this.connection || this.attempting) return;
    this.connect(this.token);
  }

  onDisconnect() {
    this.connection = null;
    this.retryLater(this.token);
  }

  signIn(token) {
    this.loginError = null;
    this.connect(token);
  }

  signOut() {
    saveToken(null);
    clearTimeout(this.retryTimer); // a scheduled reconnection would sign in again
    this.token = null;
    const connection = this.connection;
    this.connection = null;
    connection?.close();
    this.screen = "login";
    this.view.render();
  }

  request(method, params = {}) {
    if (!this.connection) return Promise.reject(new Error("app:errors.notConnected"));
    return this.connection.request(method, params);
  }

  // --- catalog ----------------------------------------------------------------------------

  async relist() {
    const rows = [];
    let cursor = null;
    let ts;
    for (let page = 0; page < LIST_PAGES; page += 1) {
      const params = { limit: LIST_PAGE, includeDerivedTitles: true };
      if (cursor) params.cursor = cursor;
      const result = await this.request("sessions.list", params);
      rows.push(...result.sessions);
      ts ??= result.ts;
      if (!result.hasMore || !result.nextCursor) break;
      cursor = result.nextCursor;
    }
    this.catalog.clear();
    this.catalog.putRows(rows, ts);
    for (const row of rows) this.noteRunState(row.key);
    this.view.render();
  }

  /** Fetch exact rows the catalog lacks (family members beyond the listed pages). */
  async ensureRows(keys) {
    for (const key of keys) {
      if (!key || this.catalog.has(key)) continue;
      try {
        const answer = await this.request("sessions.get", { key });
        if (!this.catalog.has(key)) this.catalog.putRows([answer.session], undefined);
      } catch {
        // not in the catalog: it stays hidden / not actionable
      }
    }
    this.view.render();
  }

  noteRunState(key) {
    const projection = projectRunState(this.catalog.get(key));
    this.attention.reconcile(key, projection, this.selectedKey);
    if (projection === "idle") activeSubagentKeys.delete(key);
  }

  busy(key) {
    return isBusy(this.catalog.get(key), this.attention);
  }

  // --- events -----------------------------------------------------------------------------

  onEvent(name, payload) {
    const selected = payload.sessionKey !== undefined && payload.sessionKey === this.selectedKey;
    if (name === "sessions.changed") this.onChanged(payload);
    else if (name === "session.message" && selected && this.timeline) {
      this.timeline.addMessage(payload.message);
      this.afterTimeline(true);
    } else if (name === "chat") {
      if (selected && this.timeline) this.timeline.chatEvent(payload);
      if (payload.state !== "delta") this.pendingRuns.delete(payload.runId);
    } else if (name === "agent" && selected && this.timeline && payload.stream === "tool") {
      this.timeline.agentEvent(payload);
      this.afterTimeline(true);
    } else if (name === "shutdown") {
      this.status = "reconnecting";
    }
    this.view.schedule();
  }

  onChanged(payload) {
    const { key, change } = this.catalog.applyChanged(payload);
    if (change === "relist") {
      this.relist().catch((error) => this.showNotice(error.message));
      return;
    }
    if (change === "deleted") {
      this.attention.remove(key);
      this.drafts.clear(key);
      activeSubagentKeys.delete(key);
      if (key === this.selectedKey) this.select(this.sidebarKeys()[0] ?? null);
    } else if (change === "updated") {
      this.noteRunState(key);
    }
    if (change !== "ignored" && this.details.concerns(key)) this.details.scheduleTasks();
  }

  afterTimeline(live) {
    if (this.spawns.observe(this.selectedKey, this.timeline.toolItems(), { live })) {
      this.family.refresh();
      this.details.scheduleTasks();
    }
  }

  onFamily() {
    const family = this.family.familyOf(this.selectedKey);
    if (family) {
      const keys = family.children.map((child) => child.sessionKey);
      this.ensureRows([...keys, family.current?.parentSessionKey]);
    }
    this.view.schedule();
  }

  // --- selection and actions --------------------------------------------------------------

  sidebarKeys() {
    return this.catalog
      .values()
      .filter((row) => !isNativeSubagentKey(row.key))
      .sort((a, b) => (b.updatedAt ?? 0) - (a.updatedAt ?? 0) || (a.key < b.key ? 1 : -1))
      .map((row) => row.key);
  }

  initialKey() {
    return keyFromHash() || this.selectedKey || this.sidebarKeys()[0] || null;
  }

  /** A `#session=` typed into the address bar or a pasted link: open it without a reload. */
  onHashChange() {
    const key = keyFromHash();
    if (this.screen !== "chat" || !key || key === this.selectedKey) return;
    this.select(key);
    this.view.afterSelect(key, "heading");
  }

  select(key, { force = false } = {}) {
    if (key === this.selectedKey && !force) return;
    this.selectedKey = key;
    this.panel = { key, which: null };
    const hash = key ? `#session=${encodeURIComponent(key)}` : " ";
    window.history.replaceState(null, "", hash === " " ? window.location.pathname : hash);
    this.timeline = key ? new Timeline(key) : null;
    this.spawns.observe(key, [], { live: false });
    this.tasks = { key, items: [], artifacts: null };
    if (key) {
      this.attention.markRead(key);
      this.ensureRows([key]);
      this.loadHistory(key);
      this.details.loadTasks(key);
      if (this.detailsOpen) this.details.loadTree();
    }
    this.family.select(key);
    this.view.render();
  }

  async loadHistory(key) {
    try {
      const answer = await this.request("chat.history", { sessionKey: key, limit: 200 });
      if (this.timeline?.key !== key) return;
      this.timeline.loadHistory(answer.messages);
      this.afterTimeline(false);
    } catch (error) {
      if (this.timeline?.key === key) this.showNotice(error.message);
    }
    this.view.render();
  }

  openChild(key) {
    if (this.busy(key)) activeSubagentKeys.add(key);
    this.select(key);
    this.view.afterSelect(key, "heading");
  }

  returnToParent(target) {
    if (!target || !this.catalog.has(target)) return;
    this.attention.markRead(target);
    this.select(target);
    this.view.afterSelect(target, "subagents");
  }

  setPanel(which) {
    this.panel = { key: this.selectedKey, which };
    this.view.render();
  }

  saveDraft(key, text) {
    this.drafts.set(key ?? NEW_CHAT, text);
  }

  /**
   * Send `text` to the selected conversation — on the first screen (none selected) to a new
   * chat created for it. Resolves with {sent, key}; the composer is emptied only when `sent`:
   * a message the gateway did not accept stays in the box and in the drafts.
   */
  async send(text) {
    let key = this.selectedKey;
    if (!key) {
      try {
        const created = await this.request("sessions.create", {});
        key = created.key;
      } catch (error) {
        this.sendFailed(error);
        return { sent: false, key: null };
      }
      this.drafts.move(NEW_CHAT, key);
      if (!this.selectedKey) this.select(key);
    }
    const runId = randomKey();
    this.pendingRuns.set(runId, key);
    this.view.render();
    try {
      await this.request("chat.send", { sessionKey: key, message: text, idempotencyKey: runId });
    } catch (error) {
      this.pendingRuns.delete(runId);
      this.sendFailed(error);
      return { sent: false, key };
    }
    this.drafts.clear(key, text);
    return { sent: true, key };
  }

  sendFailed(error) {
    if (!this.connection) {
      this.unsent = true;
      this.view.render();
    } else {
      this.showNotice(error.message);
    }
  }

  async newChat() {
    try {
      const created = await this.request("sessions.create", {});
      this.drafts.move(NEW_CHAT, created.key);
      this.select(created.key);
      this.view.focusComposer();
    } catch (error) {
      this.showNotice(error.message);
    }
  }

  async deleteSession(key) {
    try {
      await this.request("sessions.delete", { key });
    } catch (error) {
      this.showNotice(error.message);
    }
  }

  showNotice(message) {
    this.notice = message;
    clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => {
      this.notice = null;
      this.view.render();
    }, 8000);
    this.view.render();
  }
}

/** The `session` of the address's `#session=<key>`, or null. */
function keyFromHash() {
  return new URLSearchParams(window.location.hash.slice(1)).get("session") || null;
}
