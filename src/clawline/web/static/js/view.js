// Rendering: builds the view models from the controller's state (catalog, family, timeline,
// attention) and hands them to the components. Renders are batched per microtask.

import { rowTitle } from "./catalog.js";
import { Composer } from "./composer.js";
import { ConversationView } from "./conversation.js";
import { DetailsPane } from "./details.js";
import { h, setAttr, setText } from "./dom.js";
import { childView, cleanChildTitle, cleanWindowTitle, visibleChildren } from "./family.js";
import { currentLocale, describeError, t } from "./i18n.js";
import { icon } from "./icons.js";
import { LoginForm } from "./login.js";
import { activeSubagentKeys, isNativeSubagentKey, projectRunState } from "./runstate.js";
import { Sidebar } from "./sidebar.js";

export class View {
  constructor(root, app) {
    this.app = app;
    this.root = root;
    this.scheduled = false;
    this.login = new LoginForm({ onSubmit: (token) => app.signIn(token), onLocale: (l) => app.changeLocale(l) });
    this.sidebar = new Sidebar({
      onSelect: (key) => app.select(key),
      onNewChat: () => app.newChat(),
      onDelete: (key) => app.deleteSession(key),
      onLocale: (locale) => app.changeLocale(locale),
      onSignOut: () => app.signOut(),
    });
    this.conversation = new ConversationView({
      onReturn: () => app.returnToParent(this.returnTarget),
      onToggleDetails: () => app.details.toggle(),
      onDelete: () => app.deleteSession(app.selectedKey),
    });
    this.composer = new Composer({
      onSend: (text) => app.send(text),
      onSelectSession: (key) => app.openChild(key),
      onPanelChange: (which) => app.setPanel(which),
      onOpenSession: (key) => app.select(key),
    });
    this.details = new DetailsPane({ onSelect: (key) => app.select(key), onClose: () => app.details.toggle() });
    this.placeholder = h("p", { class: "placeholder muted", dataset: { testid: "chat-placeholder" } });
    this.main = h("main", { class: "main" }, this.placeholder, this.conversation.root, this.composer.root);
    this.shell = h("div", { class: "shell" }, this.sidebar.root, this.main, this.details.root);
    this.noticeText = h("span");
    this.noticeClose = h("button", { type: "button", class: "icon-button", onclick: () => {
      app.notice = null;
      this.render();
    } }, icon("close"));
    this.notice = h("div", { class: "notice", role: "alert", dataset: { testid: "notice" } }, this.noticeText, this.noticeClose);
    this.loading = h("p", { class: "loading muted", role: "status" });
    this.clock = null;
  }

  schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.render();
    });
  }

  focusComposer() {
    this.composer.focusInput();
  }

  render() {
    const app = this.app;
    const screens = { connecting: this.loading, login: this.login.root, chat: this.shell };
    const screen = screens[app.screen];
    if (this.root.firstElementChild !== screen) this.root.replaceChildren(screen, this.notice);
    this.notice.hidden = !app.notice;
    setText(this.noticeText, app.notice ? describeError(app.notice) : "");
    setAttr(this.noticeClose, "aria-label", t("app:dismiss"));
    setText(this.loading, t("app:loading"));
    if (app.screen === "login") {
      this.login.update({ error: app.loginError, busy: false, locale: currentLocale() });
      document.title = t("app:name");
      this.login.focus();
      return;
    }
    if (app.screen === "chat") this.renderChat();
  }

  renderChat() {
    const app = this.app;
    const key = app.selectedKey;
    const catalog = app.catalog;
    this.sidebar.update({
      rows: app.sidebarKeys().map((rowKey) => {
        const row = catalog.get(rowKey);
        return {
          key: rowKey,
          title: rowTitle(row),
          busy: app.busy(rowKey),
          unread: app.attention.get(rowKey).unread,
          updatedAt: row.updatedAt,
          channel: channelOrigin(row),
          selected: rowKey === key,
        };
      }),
      locale: currentLocale(),
      connection: app.status,
    });
    this.placeholder.hidden = Boolean(key);
    if (!key) this.composer.root.hidden = true;
    setText(this.placeholder, t("chat:header.noSelection"));
    this.conversation.root.hidden = !key;
    this.details.root.hidden = !(key && app.detailsOpen);
    if (!key) {
      document.title = t("app:name");
      return;
    }
    const family = app.family.familyOf(key);
    const children = visibleChildren(family, catalog, (childKey) => app.busy(childKey));
    const { isChild, returnTarget } = childView(family, key, catalog);
    this.returnTarget = returnTarget;
    const row = catalog.get(key);
    const title = this.titles(key, row, family);
    document.title = t("app:title", { title: title.window });
    this.conversation.update({
      title: title.header,
      isChild,
      returnTarget,
      detailsOpen: app.detailsOpen,
      detailsId: this.details.id,
      items: app.timeline?.items() ?? [],
      loaded: Boolean(app.timeline?.loaded),
    });
    const projection = projectRunState(row);
    const childBusy = isChild && (projection === "busy" || (projection === "unknown"
      && (app.attention.get(key).observedBusy || activeSubagentKeys.has(key))));
    const sending = [...app.pendingRuns.values()].includes(key) || projection === "busy";
    this.composer.update({
      sessionKey: key,
      child: isChild,
      childBusy,
      sending,
      anyChildBusy: children.some((child) => child.busy),
      children,
      panel: app.panel.key === key ? app.panel.which : null,
      tasks: app.tasks.key === key ? app.tasks.items : [],
      artifacts: app.tasks.key === key ? app.tasks.artifacts : null,
      runStartedAt: row?.startedAt ?? null,
    });
    this.tick(childBusy);
    if (app.detailsOpen) {
      const root = app.details.treeRoot;
      this.details.update({
        rows: catalog.values().filter((r) => (r.rootSessionKey ?? r.key) === root || r.key === root),
        selectedKey: key,
        busyOf: (k) => app.busy(k),
        tasks: app.tasks.key === key ? app.tasks.items : [],
        artifacts: app.tasks.key === key ? app.tasks.artifacts : null,
      });
    }
  }

  /** Header and window titles. */
  titles(key, row, family) {
    if (isNativeSubagentKey(key)) {
      const acpTitle = family?.current?.sessionKey === key ? family.current.title : null;
      if (acpTitle === null) return { header: key, window: key };
      return { header: cleanChildTitle(acpTitle, key), window: cleanWindowTitle(acpTitle, key) };
    }
    const shown = row ? rowTitle(row) : key;
    return { header: shown, window: shown };
  }

  /** While a child's status-only composer shows, re-render each second for its live timer. */
  tick(running) {
    if (running && !this.clock) this.clock = setInterval(() => this.render(), 1000);
    if (!running && this.clock) {
      clearInterval(this.clock);
      this.clock = null;
    }
  }
}

/** The channel a session talks on besides the web chat (its ``lastChannel``), or null. */
function channelOrigin(row) {
  const channel = typeof row?.lastChannel === "string" ? row.lastChannel.trim() : "";
  return channel && channel !== "webchat" ? channel : null;
}
