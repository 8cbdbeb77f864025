// Timeline items that are not plain messages: a parent agent's task in its child's
// conversation ("From <parent>", a Task badge) and the completion card a parent gets when a
// sub-agent finishes (its title as a link that opens it, status, result, duration).

import { h, setAttr, setText } from "./dom.js";
import { formatDuration, t } from "./i18n.js";
import { icon, swapIcon } from "./icons.js";
import { firstLine } from "./titles.js";

/** item: {kind: "task", text, from (the parent's title, or null when it is gone)} */
export function createTaskMessage() {
  const who = h("span", { class: "message-author", dataset: { testid: "message-task-from" } });
  const badge = h("span", { class: "badge task-badge", dataset: { testid: "message-task-badge" } });
  const body = h("div", { class: "message-body" });
  const el = h(
    "article",
    { class: "message message-task", dataset: { testid: "message-task" } },
    h("div", { class: "message-head" }, who, badge),
    body,
  );
  el.parts = { who, badge, body };
  return el;
}

export function updateTaskMessage(el, item) {
  const { who, badge, body } = el.parts;
  setText(who, item.from ? t("chat:timeline.fromParent", { title: item.from }) : t("chat:timeline.fromParentUnknown"));
  setText(badge, t("chat:timeline.task"));
  setText(body, item.text);
}

/**
 * item: {kind: "completion", childSessionKey, title, canOpen, status (ok|error|timeout|unknown),
 * error, result, seconds}. `onOpen(key)` opens the child.
 */
export function createCompletionCard(onOpen) {
  const statusIcon = h("span", { class: "completion-icon" });
  const heading = h("span", { class: "completion-heading" });
  const duration = h("span", { class: "completion-duration muted", dataset: { testid: "completion-duration" } });
  const open = h("button", {
    type: "button",
    class: "link-button completion-open",
    dataset: { testid: "completion-open" },
    onclick: () => el.item?.canOpen && onOpen(el.item.childSessionKey),
  });
  const plain = h("span", { class: "completion-child" });
  const title = h("h3", { class: "completion-title", dataset: { testid: "completion-title" } }, open, plain);
  const status = h("p", { class: "completion-status", dataset: { testid: "completion-status" } });
  const result = h("div", { class: "completion-result message-body", dataset: { testid: "completion-result" } });
  const el = h(
    "article",
    { class: "completion-card", dataset: { testid: "completion-card" } },
    h("div", { class: "completion-head" }, statusIcon, heading, duration),
    title,
    status,
    result,
  );
  el.parts = { statusIcon, heading, duration, open, plain, status, result };
  return el;
}

export function updateCompletionCard(el, item) {
  el.item = item;
  const { statusIcon, heading, duration, open, plain, status, result } = el.parts;
  setAttr(el, "data-status", item.status);
  setAttr(el, "data-child-key", item.childSessionKey);
  setAttr(el, "aria-label", t("chat:completion.label", { title: item.title }));
  setText(heading, t(`chat:completion.heading.${item.status}`));
  const ok = item.status === "ok";
  swapIcon(statusIcon, ok ? "check" : "close", () => icon(ok ? "check" : "close", ok ? "status-done" : "status-failed"));
  open.hidden = !item.canOpen;
  plain.hidden = item.canOpen;
  setText(open, item.canOpen ? item.title : "");
  setText(plain, item.canOpen ? "" : item.title);
  setAttr(open, "aria-label", t("chat:acp.subagentSessions.open", { title: item.title }));
  const word = t(`chat:completion.status.${item.status}`);
  setText(status, item.error ? t("chat:completion.failedWith", { error: item.error }) : word);
  result.classList.toggle("muted", !item.result);
  setText(result, item.result || t("chat:completion.noOutput"));
  duration.hidden = item.seconds === null || item.seconds === undefined;
  setText(duration, duration.hidden ? "" : t("chat:completion.duration", { duration: formatDuration(item.seconds) }));
}

/**
 * The timeline's items with what only the page knows added: a task's `from` (the parent's
 * title while the parent is in the catalog), a completion card's child `title`, `canOpen` and
 * — when the event has no stats — the child row's duration.
 */
export function decorateItems(items, { titles, catalog, parentKey }) {
  return items.map((item) => {
    if (item.kind === "task") {
      return { ...item, from: parentKey && catalog.has(parentKey) ? titles.of(parentKey) : null };
    }
    if (item.kind !== "completion") return item;
    const key = item.childSessionKey;
    const row = key ? catalog.get(key) : undefined;
    const known = key ? titles.of(key) : "";
    const title = known && known !== key ? known : firstLine(item.taskLabel) || key || t("chat:completion.heading.unknown");
    const runtime = typeof row?.runtimeMs === "number" ? row.runtimeMs / 1000 : null;
    return { ...item, title, canOpen: Boolean(row), seconds: item.seconds ?? runtime };
  });
}
