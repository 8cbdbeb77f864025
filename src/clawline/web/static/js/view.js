// Rendering: builds the view models from the controller's state (catalog, family, timeline,
// attention) and hands them to the components. Renders are batched per microtask.

import { decorateItems } from "./cards.js";
import { Composer } from "./composer.js";
import { ConversationView } from "./conversation.js";
import { DetailsPane } from "./details.js";
import { h, setAttr, setText } from "./dom.js";
import { childView, visibleChildren } from "./family.js";
import { currentLocale, describeError, t } from "./i18n.js";
import { icon } from "./icons.js";
import { orphanKeys, parentOf, runningDescendants } from "./lineage.js";
import { LoginForm } from "./login.js";
import { activeSubagentKeys, projectRunState } from "./runstate.js";
import { Sidebar } from "./sidebar.js";
import { Titles } from "./titles.js";

/** Below this width the sidebar is a drawer and the details pane a sheet (app.css). */
const NARROW = "(max-width: 719.98px)";
/** How long focus waits for the parent's sub-agent toggle after a return (then: the heading). */
const FOCUS_WAIT_MS = 3000;

export class View {
  constructor(root, app) {
    this.app = app;
    this.root = root;
    this.scheduled = false;
    this.login = new LoginForm({ onSubmit: (token) => app.signIn(token), onLocale: (l) => app.changeLocale(l) });
    this.narrow = window.matchMedia(NARROW);
    this.narrow.addEventListener("change", () => {
      if (!this.narrow.matches) this.drawerOpen = false;
      this.render();
    });
    this.drawerOpen = false;
    this.pendingFocus = null;
    this.sidebar = new Sidebar({
      onSelect: (key) => {
        app.select(key);
        if (this.narrow.matches) this.closeDrawer("heading");
      },
      onNewChat: () => {
        if (this.narrow.matches) this.closeDrawer(null); // newChat() focuses the composer
        app.newChat();
      },
      onDelete: (key) => app.deleteSession(key),
      onLocale: (locale) => app.changeLocale(locale),
      onSignOut: () => app.signOut(),
    });
    this.conversation = new ConversationView({
      onMenu: () => (this.drawerOpen ? this.closeDrawer("menu") : this.openDrawer()),
      onReturn: () => app.returnToParent(this.returnTarget),
      onToggleDetails: () => app.details.toggle(),
      onDelete: () => app.deleteSession(app.selectedKey),
      onOpenSession: (key) => {
        app.openChild(key);
        this.afterSelect(key, "heading");
      },
    });
    this.composer = new Composer({
      onSend: (text) => app.send(text),
      onDraft: (key, text) => app.saveDraft(key, text),
      onSelectSession: (key) => app.openChild(key),
      onPanelChange: (which) => app.setPanel(which),
      onOpenSession: (key) => {
        app.select(key);
        this.afterSelect(key, "heading");
      },
      readArtifact: (item) => app.details.readArtifact(item),
    });
    this.details = new DetailsPane({
      onSelect: (key) => {
        app.select(key);
        if (this.narrow.matches) this.closeDetails("heading"); // the sheet covers the conversation
      },
      onClose: () => this.closeDetails(),
      readArtifact: (item) => app.details.readArtifact(item),
    });
    this.sidebar.root.id = "sidebar";
    this.skipLink = h("a", {
      class: "skip-link",
      href: "#conversation",
      dataset: { testid: "skip-link" },
      onclick: (event) => {
        event.preventDefault(); // the address keeps its #session=
        this.conversation.focusHeading();
      },
    });
    this.backdrop = h("div", {
      class: "backdrop",
      dataset: { testid: "backdrop" },
      onclick: () => (this.drawerOpen ? this.closeDrawer("menu") : this.closeDetails()),
    });
    this.bannerText = h("span", { class: "banner-text", role: "status", dataset: { testid: "connection-banner-text" } });
    this.retryButton = h(
      "button",
      { type: "button", class: "retry-button", dataset: { testid: "connection-retry" }, onclick: () => app.retryNow() },
      icon("refresh"),
      h("span"),
    );
    this.banner = h("section", { class: "connection-banner", dataset: { testid: "connection-banner" } }, this.bannerText, this.retryButton);
    this.noticeText = h("span");
    this.noticeClose = h("button", { type: "button", class: "icon-button", onclick: () => {
      app.notice = null;
      this.render();
    } }, icon("close"));
    this.notice = h("div", { class: "notice", role: "alert", dataset: { testid: "notice" } }, this.noticeText, this.noticeClose);
    this.main = h(
      "main",
      { class: "main", id: "conversation" },
      this.conversation.root,
      this.banner,
      this.notice,
      this.composer.root,
    );
    this.shell = h("div", { class: "shell" }, this.skipLink, this.sidebar.root, this.backdrop, this.main, this.details.root);
    document.addEventListener("keydown", (event) => this.onKeydown(event));
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

  /**
   * Where focus goes once `key` is on screen after the control that opened it went away
   * (docs/web.md, "Focus"): "heading" (the conversation's title), "composer" (its input box, else
   * the heading) or "subagents" (the parent's sub-agent toggle once its family is loaded, else
   * the heading).
   */
  afterSelect(key, target) {
    this.pendingFocus = { key, target, until: Date.now() + FOCUS_WAIT_MS };
    if (target === "subagents") setTimeout(() => this.schedule(), FOCUS_WAIT_MS + 10);
    this.schedule();
  }

  applyFocus() {
    const want = this.pendingFocus;
    if (!want) return;
    if (want.key !== this.app.selectedKey || this.app.screen !== "chat") {
      this.pendingFocus = null;
      return;
    }
    let target = null;
    if (want.target === "subagents") {
      const toggle = this.composer.subagents.toggle;
      const family = this.app.family.familyOf(want.key);
      if (toggle.isConnected && !this.composer.root.hidden) target = toggle;
      else if ((family && family.children.length === 0) || Date.now() >= want.until) target = "heading";
    } else if (want.target === "composer") {
      target = this.composer.box.isConnected && !this.composer.root.hidden ? this.composer.input : "heading";
    } else {
      target = "heading";
    }
    if (!target) return;
    this.pendingFocus = null;
    if (target === "heading") this.conversation.focusHeading();
    else target.focus();
  }

  openDrawer() {
    this.drawerOpen = true;
    this.render();
    this.sidebar.focusCurrent();
  }

  /** Close the phone drawer; focus goes to the menu button ("menu"), the heading after a
   * choice ("heading"), or is left to the caller (null). */
  closeDrawer(focus) {
    if (!this.drawerOpen) return;
    this.drawerOpen = false;
    this.render();
    if (focus === "menu") this.conversation.menuButton.focus();
    else if (focus === "heading") this.afterSelect(this.app.selectedKey, "heading");
  }

  /** Close the details pane; focus goes back to its toggle or, after a choice, the heading. */
  closeDetails(focus = "toggle") {
    if (!this.app.detailsOpen) return;
    this.app.details.toggle();
    if (focus === "heading") this.afterSelect(this.app.selectedKey, "heading");
    else this.conversation.detailsToggle.focus();
  }

  /** Escape closes what is open, innermost first; the composer panels and confirmations
   * handle their own Escape (and mark it handled). */
  onKeydown(event) {
    if (event.key !== "Escape" || event.defaultPrevented || event.isComposing) return;
    if (this.app.screen !== "chat") return;
    if (this.drawerOpen) {
      event.preventDefault();
      this.closeDrawer("menu");
    } else if (this.app.detailsOpen) {
      event.preventDefault();
      this.closeDetails();
    }
  }

  render() {
    const app = this.app;
    const screens = { connecting: this.loading, login: this.login.root, chat: this.shell };
    const screen = screens[app.screen];
    if (this.root.firstElementChild !== screen) this.root.replaceChildren(screen);
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
    if (app.screen === "chat") {
      this.renderChat();
      this.applyFocus();
    }
  }

  renderShell() {
    const app = this.app;
    const narrow = this.narrow.matches;
    const drawer = narrow && this.drawerOpen;
    const sheet = narrow && app.detailsOpen && Boolean(app.selectedKey);
    this.shell.classList.toggle("drawer-open", drawer);
    this.backdrop.hidden = !(drawer || sheet);
    setAttr(this.main, "inert", drawer || sheet);
    setAttr(this.details.root, "inert", drawer);
    setAttr(this.sidebar.root, "inert", narrow && !drawer);
    setText(this.skipLink, t("app:skipToConversation"));
    const offline = app.status !== "connected";
    this.banner.classList.toggle("banner-off", !offline);
    setAttr(this.banner, "aria-label", t("app:connection.label"));
    setText(this.bannerText, offline ? t(app.unsent ? "app:connection.unsent" : "app:connection.lost") : "");
    this.retryButton.hidden = !offline;
    setText(this.retryButton.lastChild, t("app:connection.retry"));
  }

  renderChat() {
    const app = this.app;
    const key = app.selectedKey;
    const catalog = app.catalog;
    this.renderShell();
    const titles = this.makeTitles(key);
    const running = runningDescendants(catalog, (k) => app.busy(k));
    const rowView = (rowKey) => {
      const row = catalog.get(rowKey);
      return {
        key: rowKey,
        title: titles.of(rowKey),
        busy: app.busy(rowKey),
        unread: app.attention.get(rowKey).unread,
        updatedAt: row.updatedAt,
        channel: channelOrigin(row),
        selected: rowKey === key,
        subagentsBusy: running.get(rowKey) ?? 0,
      };
    };
    this.sidebar.update({
      rows: app.sidebarKeys().map(rowView),
      orphans: orphanKeys(catalog).map(rowView),
      locale: currentLocale(),
      connection: app.status,
    });
    this.details.root.hidden = !(key && app.detailsOpen);
    const menu = { menuExpanded: this.drawerOpen && this.narrow.matches, menuControls: this.sidebar.root.id };
    if (!key) {
      // The first screen: a composer at once; its first message creates the chat.
      document.title = t("app:name");
      this.returnTarget = null;
      this.conversation.update({
        ...menu,
        title: t("chat:sessionList.untitled"),
        fresh: true,
        isChild: false,
        returnTarget: null,
        detailsOpen: false,
        detailsId: this.details.id,
        items: [],
        loaded: true,
      });
      this.composer.update({
        sessionKey: null,
        draft: app.drafts.get(null),
        child: false,
        childBusy: false,
        sending: false,
        anyChildBusy: false,
        children: [],
        panel: null,
        tasks: [],
        artifacts: null,
        runStartedAt: null,
      });
      this.tick(false);
      return;
    }
    const family = app.family.familyOf(key);
    const children = visibleChildren(family, catalog, (childKey) => app.busy(childKey)).map((child) => ({
      ...child,
      title: titles.of(child.sessionKey),
    }));
    const { isChild, returnTarget } = childView(family, key, catalog);
    this.returnTarget = returnTarget;
    const row = catalog.get(key);
    const title = titles.of(key);
    document.title = t("app:title", { title });
    const parentKey = (family?.current?.sessionKey === key ? family.current.parentSessionKey : null) ?? parentOf(row);
    this.conversation.update({
      ...menu,
      title,
      fresh: false,
      isChild,
      returnTarget,
      detailsOpen: app.detailsOpen,
      detailsId: this.details.id,
      items: decorateItems(app.timeline?.items() ?? [], { titles, catalog, parentKey }),
      loaded: Boolean(app.timeline?.loaded),
    });
    const projection = projectRunState(row);
    const childBusy = isChild && (projection === "busy" || (projection === "unknown"
      && (app.attention.get(key).observedBusy || activeSubagentKeys.has(key))));
    const sending = [...app.pendingRuns.values()].includes(key) || projection === "busy";
    this.composer.update({
      sessionKey: key,
      draft: app.drafts.get(key),
      child: isChild,
      childBusy,
      sending,
      anyChildBusy: children.some((child) => child.busy),
      children,
      panel: app.panel.key === key ? app.panel.which : null,
      tasks: app.tasks.key === key ? app.tasks.items : [],
      artifacts: app.tasks.key === key ? app.tasks.artifacts : null,
      runStartedAt: row?.startedAt ?? null,
      titleOf: (k) => titles.of(k),
    });
    this.tick(childBusy);
    if (app.detailsOpen) {
      const root = app.details.treeRoot;
      this.details.update({
        rows: catalog.values().filter((r) => (r.rootSessionKey ?? r.key) === root || r.key === root),
        selectedKey: key,
        busyOf: (k) => app.busy(k),
        titleOf: (k) => titles.of(k),
        tasks: app.tasks.key === key ? app.tasks.items : [],
        artifacts: app.tasks.key === key ? app.tasks.artifacts : null,
      });
    }
  }

  /** The titles of this render (titles.js): the one name of each session, everywhere. */
  makeTitles(key) {
    const app = this.app;
    const family = key ? app.family.familyOf(key) : null;
    const acpTitles = new Map();
    if (family?.current) acpTitles.set(family.current.sessionKey, family.current.title);
    for (const child of family?.children ?? []) acpTitles.set(child.sessionKey, child.title);
    const timeline = app.timeline;
    const taskOf = (k) =>
      app.details.taskInfo.get(k) ?? (timeline?.key === k && timeline.subagentTask !== null ? { task: timeline.subagentTask } : undefined);
    return new Titles({ catalog: app.catalog, taskOf, acpTitles, untitled: t("chat:sessionList.untitled") });
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
