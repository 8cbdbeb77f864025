// A list of tasks (tasks.list rows) and, when the gateway offers them, artifacts. Used by the
// composer's plan panel and by the details pane.

import { ArtifactList } from "./artifacts.js";
import { h, KeyedList, setAttr, setText } from "./dom.js";
import { t, timeAgo } from "./i18n.js";
import { firstLine } from "./titles.js";

export class TaskList {
  /** `readArtifact(item)`: the bytes of an artifact (Details.readArtifact). */
  constructor({ onOpenSession, readArtifact }) {
    this.onOpenSession = onOpenSession;
    this.empty = h("p", { class: "muted", dataset: { testid: "task-list-empty" } });
    this.list = h("ul", { class: "task-list", dataset: { testid: "task-list" } });
    this.rows = new KeyedList(this.list, (task) => task.taskId, (task) => this.createRow(task), (el, task) =>
      this.updateRow(el, task),
    );
    this.artifacts = new ArtifactList({ read: (item) => readArtifact(item) });
    this.root = h("div", { class: "task-list-wrap" }, this.empty, this.list, this.artifacts.root);
  }

  /** `currentKey`: the conversation on screen (its own task gets no "Open"); `titleOf(key)`: the
   * title of a task's child session (titles.js), so a task is called what its child is. */
  update(tasks, artifacts = null, currentKey = null, titleOf = null) {
    this.currentKey = currentKey;
    this.titleOf = titleOf;
    setText(this.empty, t("details:tasksEmpty"));
    this.empty.hidden = tasks.length > 0;
    this.rows.render(tasks);
    this.artifacts.update(artifacts);
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
    const child = task.childSessionKey;
    const label = child && this.titleOf ? this.titleOf(child) : taskLabel(task);
    setText(title, label);
    setText(status, t(`details:taskStatus.${task.status}`));
    setAttr(row, "data-status", task.status);
    setText(when, task.lastEventAt ? timeAgo(task.lastEventAt) : "");
    open.hidden = !task.childSessionKey || task.childSessionKey === this.currentKey;
    setText(open, t("details:openChild"));
    setAttr(open, "aria-label", t("details:open", { title: label }));
  }
}

/** A task's label, else its task's first line (titles.js: the title of the child it spawned). */
function taskLabel(task) {
  return firstLine(task.label ?? "") || firstLine(task.task ?? "") || task.taskId;
}
