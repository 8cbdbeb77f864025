// The conversation view: header (title, sub-agent marker, return to parent, details toggle,
// delete) and the timeline (messages, streaming text, tool cards).

import { createCompletionCard, createTaskMessage, updateCompletionCard, updateTaskMessage } from "./cards.js";
import { ConfirmDelete } from "./confirm.js";
import { h, KeyedList, setAttr, setText } from "./dom.js";
import { t } from "./i18n.js";
import { icon, swapIcon } from "./icons.js";

export class ConversationView {
  constructor({ onMenu, onReturn, onToggleDetails, onDelete, onOpenSession }) {
    // tabindex -1: focus lands here after a navigation whose control went away (docs/web.md)
    this.title = h("h1", { class: "conversation-title", tabindex: "-1", dataset: { testid: "chat-title" } });
    this.menuButton = h(
      "button",
      { type: "button", class: "icon-button menu-button", dataset: { testid: "sidebar-toggle" }, onclick: () => onMenu() },
      icon("menu"),
    );
    this.markerText = h("span");
    this.marker = h(
      "span",
      { class: "badge subagent-marker", dataset: { testid: "chat-subagent-marker" } },
      icon("botMessage"),
      this.markerText,
    );
    this.returnText = h("span", { class: "return-text" });
    this.returnButton = h(
      "button",
      { type: "button", class: "return-button", dataset: { testid: "chat-subagent-return" }, onclick: () => onReturn() },
      icon("arrowLeft"),
      this.returnText,
    );
    this.detailsToggle = h(
      "button",
      { type: "button", class: "icon-button", dataset: { testid: "chat-details-toggle" }, onclick: () => onToggleDetails() },
      icon("tree"),
    );
    this.confirm = new ConfirmDelete(() => onDelete(), "chat-delete");
    this.header = h(
      "header",
      { class: "conversation-header" },
      h("div", { class: "conversation-heading" }, this.menuButton, this.returnButton, this.title, this.marker),
      h("div", { class: "conversation-actions" }, this.detailsToggle, this.confirm.root),
    );
    this.log = h("div", {
      class: "timeline",
      role: "log",
      "aria-live": "polite",
      "aria-relevant": "additions",
      tabindex: "0",
      dataset: { testid: "chat-timeline" },
    });
    this.empty = h("p", { class: "muted timeline-empty" });
    const keyOf = (item) => `${item.kind}:${item.id}${item.internal ? ":internal" : ""}`;
    this.items = new KeyedList(this.log, keyOf, (item) => createItem(item, onOpenSession), (el, item) =>
      updateItem(el, item),
    );
    this.root = h("div", { class: "conversation" }, this.header, this.empty, this.log);
  }

  /**
   * view: {title, fresh (the first screen: no conversation yet), isChild, returnTarget,
   * detailsOpen, detailsId, items, loaded, menuExpanded, menuControls}
   */
  update(view) {
    setText(this.title, view.title);
    const menu = t(view.menuExpanded ? "app:menu.close" : "app:menu.open");
    setAttr(this.menuButton, "aria-label", menu);
    setAttr(this.menuButton, "title", menu);
    setAttr(this.menuButton, "aria-expanded", String(Boolean(view.menuExpanded)));
    setAttr(this.menuButton, "aria-controls", view.menuControls);
    this.detailsToggle.hidden = Boolean(view.fresh);
    this.confirm.root.hidden = Boolean(view.fresh);
    this.marker.hidden = !view.isChild;
    setText(this.markerText, t("chat:acp.subagentSessions.marker"));
    this.returnButton.hidden = !view.returnTarget;
    const back = t("chat:acp.subagentSessions.returnToParent");
    setText(this.returnText, back);
    setAttr(this.returnButton, "aria-label", back);
    setAttr(this.detailsToggle, "aria-expanded", String(view.detailsOpen));
    setAttr(this.detailsToggle, "aria-controls", view.detailsId);
    const details = t(view.detailsOpen ? "chat:header.hideDetails" : "chat:header.showDetails");
    setAttr(this.detailsToggle, "aria-label", details);
    setAttr(this.detailsToggle, "title", details);
    this.confirm.update(t("chat:header.delete"));
    setAttr(this.log, "aria-label", t("chat:timeline.label"));
    setText(this.empty, t(view.fresh ? "chat:timeline.start" : "chat:timeline.empty"));
    this.empty.hidden = !view.loaded || view.items.length > 0;
    const stick = this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 80;
    this.items.render(view.items);
    if (stick) this.log.scrollTop = this.log.scrollHeight;
  }

  focusHeading() {
    this.title.focus();
  }
}

function createItem(item, onOpenSession) {
  if (item.kind === "tool") return createToolCard();
  if (item.kind === "completion") return createCompletionCard((key) => onOpenSession?.(key));
  if (item.kind === "task") return createTaskMessage();
  const body = h("div", { class: "message-body" });
  if (item.internal) {
    // A completion event for the agent: collapsed, it is long and not written by a person.
    const who = h("summary", { class: "message-author" });
    const el = h("details", { class: "message message-internal", dataset: { testid: "message-internal" } }, who, body);
    el.parts = { who, body };
    return el;
  }
  const who = h("span", { class: "message-author" });
  const el = h("article", { class: `message message-${item.kind}`, dataset: { testid: `message-${item.kind}` } }, who, body);
  el.parts = { who, body };
  return el;
}

function updateItem(el, item) {
  if (item.kind === "tool") {
    updateToolCard(el, item);
    return;
  }
  if (item.kind === "completion") {
    updateCompletionCard(el, item);
    return;
  }
  if (item.kind === "task") {
    updateTaskMessage(el, item);
    return;
  }
  const { who, body } = el.parts;
  const author = item.kind === "user" && item.internal ? "internal" : item.kind;
  setText(who, t(`chat:timeline.${author}`));
  setText(body, item.text);
  setAttr(el, "aria-busy", item.streaming ? "true" : false);
}

function createToolCard() {
  const status = h("span", { class: "tool-status" });
  const statusIcon = h("span", { class: "tool-status-icon" });
  const name = h("span", { class: "tool-name" });
  const args = h("pre", { class: "tool-args" });
  const result = h("pre", { class: "tool-result" });
  const summary = h("summary", {}, statusIcon, name, status);
  const el = h("details", { class: "tool-card", dataset: { testid: "tool-card" } }, summary, args, result);
  el.parts = { status, statusIcon, name, args, result };
  return el;
}

function updateToolCard(el, item) {
  const { status, statusIcon, name, args, result } = el.parts;
  const label = item.title === "sessions_spawn" ? t("chat:acp.toolName.spawnSubagent") : item.title;
  setText(name, label);
  setText(status, t(`chat:tool.${item.status}`));
  setAttr(el, "data-status", item.status);
  setAttr(el, "data-tool", item.title);
  const running = item.status === "in_progress" || item.status === "pending";
  swapIcon(statusIcon, running ? "loader" : item.status === "failed" ? "close" : "check", () =>
    running ? icon("loader", "spin status-busy") : icon(item.status === "failed" ? "close" : "check"),
  );
  setText(args, item.args === undefined ? "" : pretty(item.args));
  setText(result, item.details === undefined ? "" : pretty(shownDetails(item)));
}

/** A spawn result without its childSessionKey: the UI never shows it. */
function shownDetails(item) {
  const details = item.details;
  if (item.title !== "sessions_spawn" || !details || typeof details !== "object") return details;
  const { childSessionKey, ...rest } = details;
  return rest;
}

function pretty(value) {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}
