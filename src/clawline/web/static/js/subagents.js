// The composer's sub-agent control: aggregate toggle, polite status, and the panel of child
// rows (docs/web.md). Props: sessions ({sessionKey, title, busy}[]), sessionKey,
// onSelectSession, controlled isExpanded / onExpandedChange. Empty sessions render nothing: the
// owner leaves `root` out of the document then.

import { h, KeyedList, setAttr, setText, uid } from "./dom.js";
import { t } from "./i18n.js";
import { runIcon, swapIcon } from "./icons.js";

const NS = "chat:acp.subagentSessions";

export class SubagentSessions {
  constructor() {
    this.panelId = uid("subagent-panel");
    this.statusId = uid("subagent-status");
    this.props = null;
    this.iconHolder = h("span", { class: "subagent-toggle-icon" });
    this.countText = h("span", { class: "subagent-toggle-count" });
    this.toggle = h(
      "button",
      {
        type: "button",
        class: "subagent-toggle",
        dataset: { testid: "acp-subagent-sessions-toggle" },
        "aria-controls": this.panelId,
        "aria-describedby": this.statusId,
        onclick: () => this.props?.onExpandedChange(!this.props.isExpanded),
        onkeydown: (event) => this.onKeydown(event),
      },
      this.iconHolder,
      this.countText,
    );
    this.status = h("span", {
      id: this.statusId,
      class: "sr-only",
      role: "status",
      "aria-live": "polite",
      "aria-atomic": "true",
      dataset: { testid: "acp-subagent-sessions-status" },
    });
    this.list = h("div", { class: "subagent-rows" });
    this.panel = h(
      "section",
      {
        id: this.panelId,
        class: "subagent-panel composer-panel",
        dataset: { testid: "acp-subagent-sessions-panel" },
        onkeydown: (event) => this.onKeydown(event),
      },
      this.list,
    );
    this.rows = new KeyedList(this.list, (s) => s.sessionKey, (s) => this.createRow(s), (el, s) =>
      this.updateRow(el, s),
    );
    this.root = h("div", { class: "subagent-control" }, this.toggle, this.status);
  }

  update(props) {
    this.props = props;
    const { sessions, isExpanded } = props;
    if (sessions.length === 0) {
      this.panel.remove();
      return;
    }
    const anyBusy = sessions.some((s) => s.busy);
    const count = t(`${NS}.count`, { count: sessions.length });
    const action = t(`${NS}.${isExpanded ? "collapse" : "expand"}`);
    setText(this.countText, count);
    setAttr(this.toggle, "aria-expanded", String(isExpanded));
    setAttr(this.toggle, "aria-label", t(`${NS}.toggle`, { action, count }));
    setAttr(this.toggle, "data-busy", String(anyBusy));
    swapIcon(this.iconHolder, anyBusy ? "loader" : "bot", () => runIcon(anyBusy));
    const status = t(`${NS}.${anyBusy ? "busy" : "settled"}`);
    setText(this.status, t(`${NS}.aggregateStatus`, { status }));
    setAttr(this.panel, "aria-label", t(`${NS}.panel`));
    if (isExpanded) {
      this.rows.render(sessions);
      if (this.panel.parentElement !== this.root) this.root.append(this.panel);
    } else {
      this.panel.remove();
    }
  }

  createRow(session) {
    const statusId = uid("subagent-row-status");
    const title = h("span", { class: "subagent-row-title" });
    const iconHolder = h("span", { class: "subagent-row-icon" });
    const status = h("span", {
      id: statusId,
      class: "sr-only",
      role: "status",
      "aria-live": "polite",
      "aria-atomic": "true",
      dataset: { testid: "acp-subagent-session-status" },
    });
    const button = h(
      "button",
      {
        type: "button",
        class: "subagent-row",
        dataset: { testid: "acp-subagent-session-row", sessionKey: session.sessionKey },
        "aria-describedby": statusId,
        onclick: () => this.props?.onSelectSession(session.sessionKey),
      },
      iconHolder,
      title,
    );
    const row = h("div", { class: "subagent-row-wrap" }, button, status);
    row.parts = { button, title, iconHolder, status };
    return row;
  }

  updateRow(row, session) {
    const { button, title, iconHolder, status } = row.parts;
    const shown = session.title; // the shared title (titles.js), as in the tree and the header
    setText(title, shown);
    setAttr(button, "aria-label", t(`${NS}.open`, { title: shown }));
    setAttr(button, "data-busy", String(session.busy));
    swapIcon(iconHolder, session.busy ? "loader" : "bot", () => runIcon(session.busy));
    const state = t(`${NS}.${session.busy ? "busy" : "settled"}`);
    setText(status, t(`${NS}.rowStatus`, { title: shown, status: state }));
  }

  onKeydown(event) {
    if (event.key === "Escape" && this.props?.isExpanded) {
      event.preventDefault();
      this.props.onExpandedChange(false);
      this.toggle.focus();
    }
  }
}
