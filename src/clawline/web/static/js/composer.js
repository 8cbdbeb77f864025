// The composer: a status row (working indicator; sub-agent toggle, then the plan control) and
// the input box — or, in a child conversation, the status row alone while the child is busy
// (docs/web.md). The plan control lists the conversation's tasks.

import { h, setAttr, setText, uid } from "./dom.js";
import { t } from "./i18n.js";
import { icon } from "./icons.js";
import { SubagentSessions } from "./subagents.js";
import { TaskList } from "./tasks.js";

export class Composer {
  constructor({ onSend, onDraft, onSelectSession, onPanelChange, onOpenSession, readArtifact }) {
    this.onSend = onSend;
    this.onDraft = onDraft;
    this.shownKey = undefined; // the conversation whose draft the box holds (null: a new chat)
    this.submitting = false;
    this.subagents = new SubagentSessions();
    this.indicatorText = h("span", { class: "working-text" });
    this.elapsed = h("span", { class: "working-elapsed" });
    this.indicator = h(
      "div",
      { class: "working-indicator", role: "status", dataset: { testid: "chat-composer-working-indicator" } },
      icon("loader", "spin status-busy"),
      this.indicatorText,
      this.elapsed,
    );
    this.planId = uid("plan-panel");
    this.planText = h("span");
    this.planToggle = h(
      "button",
      {
        type: "button",
        class: "plan-toggle",
        dataset: { testid: "chat-composer-plan-toggle" },
        "aria-controls": this.planId,
        onclick: () => onPanelChange(this.props?.panel === "plan" ? null : "plan"),
      },
      icon("tasks"),
      this.planText,
    );
    this.tasks = new TaskList({ onOpenSession, readArtifact });
    this.planPanel = h(
      "section",
      {
        id: this.planId,
        class: "plan-panel composer-panel",
        dataset: { testid: "chat-composer-plan-panel" },
      },
      this.tasks.root,
    );
    const closePlan = (event) => {
      if (event.key === "Escape" && this.props?.panel === "plan") {
        event.preventDefault();
        onPanelChange(null);
        this.planToggle.focus();
      }
    };
    this.planControl = h("div", { class: "plan-control", onkeydown: closePlan }, this.planToggle);
    this.statusRow = h(
      "div",
      { class: "composer-status-row", dataset: { testid: "chat-composer-status-row" } },
      h("div", { class: "composer-status-left" }, this.indicator),
      h("div", { class: "composer-status-right" }, this.subagents.root, this.planControl),
    );
    this.input = h("textarea", {
      class: "composer-input",
      rows: 2,
      dataset: { testid: "chat-composer-input" },
      oninput: () => this.onDraft?.(this.shownKey ?? null, this.input.value),
      onkeydown: (event) => {
        if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
          event.preventDefault();
          this.submit();
        }
      },
    });
    this.sendButton = h(
      "button",
      { type: "submit", class: "send-button", dataset: { testid: "chat-composer-send" } },
      icon("send"),
      h("span", { class: "sr-only" }),
    );
    this.inputLabelId = uid("composer-label");
    this.inputLabel = h("label", { class: "sr-only", id: this.inputLabelId });
    this.box = h(
      "form",
      {
        class: "composer-box",
        dataset: { testid: "chat-composer-box" },
        onsubmit: (event) => {
          event.preventDefault();
          this.submit();
        },
      },
      this.inputLabel,
      this.input,
      this.sendButton,
    );
    this.inputLabel.htmlFor = this.input.id = uid("composer-input");
    this.root = h("div", { class: "composer", dataset: { testid: "chat-composer" } }, this.statusRow, this.box);
    this.subagentsOnSelect = onSelectSession;
    this.onPanelChange = onPanelChange;
  }

  /** Send the box's text; it is emptied only once the gateway accepted it (docs/web.md). */
  async submit() {
    const text = this.input.value;
    if (!text.trim() || this.submitting) return;
    this.submitting = true;
    let outcome;
    try {
      outcome = await this.onSend(text);
    } finally {
      this.submitting = false;
    }
    if (outcome?.sent && this.shownKey === outcome.key && this.input.value === text) {
      this.input.value = "";
    }
  }

  /**
   * view: {sessionKey (null: the first screen's new chat), draft, child, childBusy, sending,
   * anyChildBusy, children, panel, tasks, runStartedAt}
   */
  update(view) {
    this.props = view;
    if (view.sessionKey !== this.shownKey) {
      // another conversation: its own draft (the box never carries text across)
      this.shownKey = view.sessionKey;
      this.input.value = view.draft ?? "";
    }
    const children = view.child ? [] : view.children;
    const hasPlan = !view.child && view.tasks.length > 0;
    const working = view.child ? view.childBusy : view.sending || view.anyChildBusy;
    const showRow = view.child
      ? view.childBusy
      : view.sending || view.anyChildBusy || children.length > 0 || hasPlan;
    this.statusRow.hidden = !showRow;
    this.root.hidden = view.child && !view.childBusy;
    this.indicator.hidden = !working;
    const thinking = view.child || view.sending;
    setText(this.indicatorText, t(thinking ? "chat:composer.thinking" : "chat:composer.subagentsWorking"));
    const started = view.child && view.childBusy ? view.runStartedAt : null;
    setText(this.elapsed, started ? t("chat:composer.elapsed", { seconds: elapsedSeconds(started) }) : "");
    const right = this.planControl.parentElement;
    if (children.length === 0) this.subagents.root.remove();
    else if (this.subagents.root.parentElement !== right) right.insertBefore(this.subagents.root, this.planControl);
    this.subagents.update({
      sessions: children,
      sessionKey: view.sessionKey,
      onSelectSession: this.subagentsOnSelect,
      isExpanded: view.panel === "subagents",
      onExpandedChange: (open) => this.onPanelChange(open ? "subagents" : null),
    });
    this.updatePlan(hasPlan, view);
    this.box.hidden = view.child;
    if (view.child) this.box.remove();
    if (!view.child && this.box.parentElement !== this.root) this.root.append(this.box);
    setText(this.inputLabel, t("chat:composer.label"));
    setAttr(this.input, "placeholder", t("chat:composer.placeholder"));
    setText(this.sendButton.lastChild, t("chat:composer.send"));
    setAttr(this.sendButton, "aria-label", t("chat:composer.send"));
  }

  updatePlan(hasPlan, view) {
    this.planControl.hidden = !hasPlan;
    const open = hasPlan && view.panel === "plan";
    const count = view.tasks.length;
    setText(this.planText, t("chat:composer.plan", { count }));
    setAttr(this.planToggle, "aria-expanded", String(open));
    setAttr(
      this.planToggle,
      "aria-label",
      t(open ? "chat:composer.planCollapse" : "chat:composer.planExpand", { count }),
    );
    setAttr(this.planPanel, "aria-label", t("chat:composer.planPanel"));
    if (open) {
      this.tasks.update(view.tasks, view.artifacts, view.sessionKey, view.titleOf);
      if (this.planPanel.parentElement !== this.planControl) this.planControl.append(this.planPanel);
    } else {
      this.planPanel.remove();
    }
  }

  focusInput() {
    if (this.box.isConnected) this.input.focus();
  }
}

function elapsedSeconds(startedAt) {
  return Math.max(0, Math.floor((Date.now() - startedAt) / 1000));
}
