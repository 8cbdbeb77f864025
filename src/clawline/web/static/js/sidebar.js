// The sidebar: new chat, the conversations (native sub-agent sessions hidden — presentation
// only), each with busy > unread > time-ago and a cue while its sub-agents run, and an
// exact-key delete with confirmation. Sub-agent sessions whose parent is gone are listed in
// their own group, "Orphaned subagents", so they stay reachable.

import { ConfirmDelete } from "./confirm.js";
import { h, KeyedList, setAttr, setText } from "./dom.js";
import { LOCALE_NAMES, LOCALES, t, timeAgo } from "./i18n.js";
import { icon, swapIcon } from "./icons.js";

export class Sidebar {
  constructor({ onSelect, onNewChat, onDelete, onLocale, onSignOut }) {
    this.onSelect = onSelect;
    this.onDelete = onDelete;
    this.newChat = h(
      "button",
      { type: "button", class: "new-chat", dataset: { testid: "sidebar-new-chat" }, onclick: onNewChat },
      icon("plus"),
      h("span"),
    );
    this.heading = h("h2", { class: "sr-only" });
    this.list = h("ul", { class: "session-list", dataset: { testid: "session-list" } });
    this.empty = h("p", { class: "muted session-empty" });
    this.rows = new KeyedList(this.list, (row) => row.key, (row) => this.createRow(row), (el, row) =>
      this.updateRow(el, row),
    );
    this.orphanHeading = h("h3", { class: "session-group-heading", id: "orphan-heading" });
    this.orphanHint = h("p", { class: "session-group-hint muted" });
    this.orphanList = h("ul", { class: "session-list", dataset: { testid: "orphan-list" }, "aria-labelledby": "orphan-heading" });
    this.orphanRows = new KeyedList(this.orphanList, (row) => row.key, (row) => this.createRow(row), (el, row) =>
      this.updateRow(el, row),
    );
    this.orphans = h(
      "section",
      { class: "session-group", dataset: { testid: "orphan-group" }, "aria-labelledby": "orphan-heading" },
      this.orphanHeading,
      this.orphanHint,
      this.orphanList,
    );
    this.nav = h("nav", { class: "session-nav" }, this.heading, this.list, this.empty, this.orphans);
    this.languageLabel = h("label", { for: "language-select", class: "sr-only" });
    this.language = h(
      "select",
      { id: "language-select", dataset: { testid: "language-select" }, onchange: (e) => onLocale(e.target.value) },
      ...LOCALES.map((code) => h("option", { value: code, lang: code, text: LOCALE_NAMES[code] })),
    );
    this.connection = h("span", { class: "connection muted", role: "status", dataset: { testid: "connection-status" } });
    this.signOut = h("button", { type: "button", class: "icon-button", onclick: onSignOut }, icon("logout"));
    this.root = h(
      "aside",
      { class: "sidebar" },
      h("div", { class: "sidebar-head" }, h("span", { class: "brand", text: "clawline" }), this.newChat),
      this.nav,
      h("div", { class: "sidebar-foot" }, this.languageLabel, this.language, this.connection, this.signOut),
    );
  }

  /** view: {rows: [{key, title, busy, unread, updatedAt, channel, selected, subagentsBusy}],
   * orphans (rows of the same shape), locale, connection} */
  update(view) {
    setText(this.newChat.lastChild, t("chat:sessionList.newChat"));
    setAttr(this.nav, "aria-label", t("chat:sessionList.label"));
    setText(this.heading, t("chat:sessionList.label"));
    setText(this.empty, t("chat:sessionList.empty"));
    this.empty.hidden = view.rows.length > 0;
    this.rows.render(view.rows);
    const orphans = view.orphans ?? [];
    this.orphans.hidden = orphans.length === 0;
    setText(this.orphanHeading, t("chat:sessionList.orphans"));
    setText(this.orphanHint, t("chat:sessionList.orphansHint"));
    this.orphanRows.render(orphans);
    setText(this.languageLabel, t("app:language"));
    setAttr(this.language, "aria-label", t("app:language"));
    if (this.language.value !== view.locale) this.language.value = view.locale;
    setText(this.connection, t(`app:connection.${view.connection}`));
    setAttr(this.signOut, "aria-label", t("app:signOut"));
    setAttr(this.signOut, "title", t("app:signOut"));
  }

  /** Focus the selected conversation's row, else New chat (the phone drawer just opened). */
  focusCurrent() {
    const current = this.list.querySelector(".session-row.selected .session-select");
    (current ?? this.newChat).focus();
  }

  createRow(row) {
    const title = h("span", { class: "session-title" });
    const cue = h("span", { class: "session-cue" });
    const cueText = h("span", { class: "session-cue-text" });
    const origin = h("span", { class: "session-origin", dataset: { testid: "session-origin" } });
    const subagentIcon = h("span", { class: "session-subagents-icon" });
    const subagentCount = h("span", { class: "session-subagents-count", "aria-hidden": "true" });
    const subagents = h(
      "span",
      { class: "session-subagents", role: "img", dataset: { testid: "session-subagents" } },
      subagentIcon,
      subagentCount,
    );
    const select = h(
      "button",
      { type: "button", class: "session-select", onclick: () => this.onSelect(row.key) },
      title,
      h("span", { class: "session-meta" }, cue, cueText, subagents, origin),
    );
    const confirm = new ConfirmDelete(() => this.onDelete(row.key), "session-delete");
    const li = h("li", { class: "session-row", dataset: { testid: "session-row", sessionKey: row.key } }, select, confirm.root);
    li.parts = { title, cue, cueText, origin, select, confirm, subagents, subagentIcon, subagentCount };
    return li;
  }

  updateRow(li, row) {
    const { title, cue, cueText, origin, select, confirm, subagents, subagentIcon, subagentCount } = li.parts;
    setText(title, row.title);
    const running = row.subagentsBusy ?? 0;
    subagents.hidden = running === 0;
    setAttr(li, "data-subagents-busy", String(running));
    const runningText = running ? t("chat:sessionList.subagentsRunning", { count: running }) : "";
    setAttr(subagents, "aria-label", runningText || false);
    setAttr(subagents, "title", runningText || false);
    setText(subagentCount, running ? String(running) : "");
    if (running) swapIcon(subagentIcon, "loader", () => icon("loader", "spin status-busy"));
    else subagentIcon.replaceChildren();
    origin.hidden = !row.channel;
    setText(origin, row.channel ? t("chat:sessionList.via", { channel: row.channel }) : "");
    setAttr(select, "aria-current", row.selected ? "page" : false);
    li.classList.toggle("selected", row.selected);
    const kind = row.busy ? "busy" : row.unread ? "unread" : "idle";
    setAttr(li, "data-cue", kind);
    if (kind === "busy") {
      swapIcon(cue, "loader", () => icon("loader", "spin status-busy"));
      setText(cueText, t("chat:sessionList.running"));
    } else if (kind === "unread") {
      swapIcon(cue, "dot", () => icon("dot", "status-unread"));
      setText(cueText, t("chat:sessionList.unread"));
    } else {
      cue.replaceChildren();
      setText(cueText, row.updatedAt ? timeAgo(row.updatedAt) : "");
    }
    confirm.update(t("chat:sessionList.delete", { title: row.title }));
  }
}
