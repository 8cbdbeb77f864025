// The details pane: the lineage tree of the selected conversation's whole family (every depth,
// live run state from the catalog) and the tasks of the selected session.
//
// The tree comes from gateway catalog rows (sessions.list {rootSessionKey}: one indexed query
// for the whole tree), never from ACP: it is an overview, not the sub-agent panel's membership.

import { h, placeChildren, setAttr, setText, uid } from "./dom.js";
import { t } from "./i18n.js";
import { icon } from "./icons.js";
import { parentOf } from "./lineage.js";
import { isNativeSubagentKey } from "./runstate.js";
import { TaskList } from "./tasks.js";

export class DetailsPane {
  constructor({ onSelect, onClose, readArtifact }) {
    this.onSelect = onSelect;
    this.id = uid("details");
    this.heading = h("h2", { class: "pane-heading" });
    this.close = h("button", { type: "button", class: "icon-button", onclick: onClose }, icon("close"));
    this.treeHeading = h("h3", { class: "pane-subheading", id: uid("tree-heading") });
    this.tree = h("ul", { class: "lineage-tree", dataset: { testid: "lineage-tree" }, "aria-labelledby": this.treeHeading.id });
    this.tasksHeading = h("h3", { class: "pane-subheading" });
    this.tasks = new TaskList({ onOpenSession: onSelect, readArtifact });
    this.root = h(
      "aside",
      { id: this.id, class: "details-pane", dataset: { testid: "details-pane" } },
      h("div", { class: "pane-head" }, this.heading, this.close),
      h("section", {}, this.treeHeading, this.tree),
      h("section", { dataset: { testid: "details-tasks" } }, this.tasksHeading, this.tasks.root),
    );
    this.nodes = new Map();
  }

  /** view: {rows (the family's catalog rows), selectedKey, busyOf(key), titleOf(key), tasks,
   * artifacts} */
  update(view) {
    setAttr(this.root, "aria-label", t("details:label"));
    setText(this.heading, t("details:label"));
    setAttr(this.close, "aria-label", t("details:close"));
    setText(this.treeHeading, t("details:tree"));
    setText(this.tasksHeading, t("details:tasks"));
    this.renderTree(view);
    this.tasks.update(view.tasks, view.artifacts, view.selectedKey, view.titleOf);
  }

  renderTree({ rows, selectedKey, busyOf, titleOf }) {
    const byKey = new Map(rows.map((row) => [row.key, row]));
    const children = new Map();
    const roots = [];
    for (const row of rows) {
      const parent = parentOf(row);
      if (parent && byKey.has(parent) && parent !== row.key) {
        if (!children.has(parent)) children.set(parent, []);
        children.get(parent).push(row);
      } else {
        roots.push(row);
      }
    }
    const byAge = (a, b) => (a.createdAt ?? 0) - (b.createdAt ?? 0) || (a.key < b.key ? -1 : 1);
    const used = new Set();
    const build = (row, list) => {
      if (used.has(row.key)) return;
      used.add(row.key);
      const node = this.node(row, { selectedKey, busy: busyOf(row.key), title: titleOf(row.key) });
      list.push(node.li);
      const kids = (children.get(row.key) ?? []).sort(byAge);
      const items = [];
      for (const kid of kids) build(kid, items);
      node.group.hidden = items.length === 0;
      placeChildren(node.group, items);
    };
    const top = [];
    for (const row of roots.sort(byAge)) build(row, top);
    for (const row of rows) build(row, top); // rows caught in a parent cycle
    for (const key of [...this.nodes.keys()]) if (!used.has(key)) this.nodes.delete(key);
    placeChildren(this.tree, top);
    if (top.length === 0) placeChildren(this.tree, [h("li", { class: "muted", text: t("details:treeEmpty") })]);
  }

  node(row, { selectedKey, busy, title }) {
    let node = this.nodes.get(row.key);
    if (!node) {
      const label = h("span", { class: "tree-label" });
      const state = h("span", { class: "tree-state" });
      const stateIcon = h("span", { class: "tree-icon" });
      const badge = h("span", { class: "badge tree-badge" });
      badge.hidden = !isNativeSubagentKey(row.key);
      const button = h(
        "button",
        { type: "button", class: "tree-node", onclick: () => this.onSelect(row.key) },
        stateIcon,
        h("span", { class: "tree-text" }, label),
        badge,
        state,
      );
      const group = h("ul", { role: "group", class: "tree-group" });
      const li = h("li", { dataset: { testid: "lineage-node", sessionKey: row.key } }, button, group);
      node = { li, button, label, badge, state, stateIcon, group, icon: null };
      this.nodes.set(row.key, node);
    }
    const status = busy ? "running" : statusWord(row.status);
    setText(node.label, title);
    setText(node.badge, t("chat:sessionList.subagent"));
    setText(node.state, t(`details:runStatus.${status}`));
    setAttr(node.li, "data-status", status);
    setAttr(node.button, "aria-current", row.key === selectedKey ? "true" : false);
    setAttr(node.button, "title", row.key);
    const iconName = busy ? "loader" : status === "failed" || status === "killed" || status === "timeout" ? "close" : "bot";
    if (node.icon !== iconName) {
      node.icon = iconName;
      node.stateIcon.replaceChildren(iconName === "loader" ? icon("loader", "spin status-busy") : icon(iconName, "status-idle"));
    }
    return node;
  }
}

function statusWord(status) {
  const known = ["done", "failed", "killed", "timeout", "running"];
  return known.includes(status) ? status : "idle";
}
