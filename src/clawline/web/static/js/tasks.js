// A list of tasks (tasks.list rows) and, when the gateway offers them, artifacts. Used by the
// composer's plan panel and by the details pane.

import { h, KeyedList, setAttr, setText } from "./dom.js";
import { t, timeAgo } from "./i18n.js";

export class TaskList {
  constructor({ onOpenSession }) {
    this.onOpenSession = onOpenSession;
    this.empty = h("p", { class: "muted", dataset: { testid: "task-list-empty" } });
    this.list = h("ul", { class: "task-list", dataset: { testid: "task-list" } });
    this.rows = new KeyedList(this.list, (task) => task.taskId, (task) => this.createRow(task), (el, task) =>
      this.updateRow(el, task),
    );
    this.artifactsHeading = h("h3", { class: "pane-subheading" });
    this.artifactList = h("ul", { class: "artifact-list", dataset: { testid: "artifact-list" } });
    this.artifactRows = new KeyedList(
      this.artifactList,
      (item) => item.key,
      () => h("li", { class: "artifact" }),
      (el, item) => setText(el, item.label),
    );
    this.artifacts = h("div", { class: "artifacts" }, this.artifactsHeading, this.artifactList);
    this.root = h("div", { class: "task-list-wrap" }, this.empty, this.list, this.artifacts);
  }

  /** `currentKey`: the conversation on screen (its own task gets no "Open"). */
  update(tasks, artifacts = null, currentKey = null) {
    this.currentKey = currentKey;
    setText(this.empty, t("details:tasksEmpty"));
    this.empty.hidden = tasks.length > 0;
    this.rows.render(tasks);
    this.artifacts.hidden = !artifacts || artifacts.length === 0;
    setText(this.artifactsHeading, t("details:artifacts"));
    this.artifactRows.render(artifacts ?? []);
  }

  createRow(task) {
    const title = h("span", { class: "task-title" });
    const status = h("span", { class: "task-status" });
    const when = h("span", { class: "task-when muted" });
    const open = h("button", {
      type: "button",
      class: "link-button task-open",
      onclick: () => this.onOpenSession(task.childSessionKey),
    });
    const row = h("li", { class: "task", dataset: { testid: "task-row" } }, title, status, when, open);
    row.parts = { title, status, when, open };
    return row;
  }

  updateRow(row, task) {
    const { title, status, when, open } = row.parts;
    const label = taskLabel(task);
    setText(title, label);
    setText(status, t(`details:taskStatus.${task.status}`));
    setAttr(row, "data-status", task.status);
    setText(when, task.lastEventAt ? timeAgo(task.lastEventAt) : "");
    open.hidden = !task.childSessionKey || task.childSessionKey === this.currentKey;
    setText(open, t("details:openChild"));
    setAttr(open, "aria-label", t("details:open", { title: label }));
  }
}

function taskLabel(task) {
  const text = task.label || String(task.task ?? "").split("\n")[0] || task.taskId;
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
