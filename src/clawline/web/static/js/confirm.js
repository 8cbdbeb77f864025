// A delete button that asks for confirmation in place (no window.confirm): Delete → "Delete?"
// with Delete / Cancel. Escape or Cancel go back; focus moves with the state.

import { h, setAttr, setText } from "./dom.js";
import { t } from "./i18n.js";
import { icon } from "./icons.js";

export class ConfirmDelete {
  constructor(onConfirm, testId) {
    this.onConfirm = onConfirm;
    this.ask = h(
      "button",
      { type: "button", class: "icon-button danger", dataset: { testid: testId }, onclick: () => this.open(true) },
      icon("trash"),
    );
    this.question = h("span", { class: "confirm-question" });
    this.yes = h("button", {
      type: "button",
      class: "confirm-yes danger",
      dataset: { testid: `${testId}-confirm` },
      onclick: () => {
        this.open(false);
        this.onConfirm();
      },
    });
    this.no = h("button", { type: "button", class: "confirm-no", onclick: () => this.open(false, true) });
    this.panel = h(
      "span",
      {
        class: "confirm-panel",
        role: "group",
        onkeydown: (event) => {
          if (event.key !== "Escape") return;
          event.preventDefault(); // handled: the page's Escape (details, drawer) waits
          this.open(false, true);
        },
      },
      this.question,
      this.yes,
      this.no,
    );
    this.panel.hidden = true;
    this.root = h("span", { class: "confirm-delete" }, this.ask, this.panel);
  }

  open(asking, refocus = false) {
    this.ask.hidden = asking;
    this.panel.hidden = !asking;
    if (asking) this.yes.focus();
    else if (refocus) this.ask.focus();
  }

  update(label) {
    setAttr(this.ask, "aria-label", label);
    setAttr(this.ask, "title", label);
    setAttr(this.panel, "aria-label", label);
    setText(this.question, t("chat:sessionList.confirmDelete"));
    setText(this.yes, t("chat:sessionList.confirm"));
    setText(this.no, t("chat:sessionList.cancel"));
  }
}
