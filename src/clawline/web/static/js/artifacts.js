// The artifacts of a conversation's task runs: name, size, Open (a text preview in the page)
// and Download (a Blob saved under the file's name). The bytes come over the WebSocket from
// the gateway (details-data.js, xworkmate.artifacts.read); nothing is fetched from elsewhere
// and nothing the artifact contains is ever rendered as markup or run: a preview is a text node,
// a download is `application/octet-stream`.

import { h, KeyedList, setAttr, setText, uid } from "./dom.js";
import { describeError, formatBytes, t } from "./i18n.js";
import { icon } from "./icons.js";

const TEXT_TYPES = [/^text\//, /^application\/(json|xml|javascript|x-yaml|yaml|toml|x-sh|sql|csv)\b/, /\+(json|xml)$/];

/** Whether a content type is text the preview can show. */
export function isTextType(contentType) {
  const type = String(contentType ?? "").toLowerCase().split(";")[0].trim();
  return TEXT_TYPES.some((pattern) => pattern.test(type));
}

function baseName(path) {
  return String(path).split("/").filter(Boolean).pop() || "artifact";
}

/** Save `bytes` as a file called `name` (a Blob URL on a transient link, revoked after). */
export function saveBytes(bytes, name) {
  const url = URL.createObjectURL(new Blob([bytes], { type: "application/octet-stream" }));
  const link = h("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export class ArtifactList {
  /** `read(item)` → Promise<{bytes, contentType}> (Details.readArtifact). */
  constructor({ read }) {
    this.read = read;
    this.heading = h("h3", { class: "pane-subheading" });
    this.list = h("ul", { class: "artifact-list", dataset: { testid: "artifact-list" } });
    this.rows = new KeyedList(this.list, (item) => item.key, (item) => this.createRow(item), (el, item) =>
      this.updateRow(el, item),
    );
    this.status = h("p", { class: "artifact-status muted", role: "status", dataset: { testid: "artifact-status" } });
    this.previewName = h("h4", { class: "artifact-preview-name", id: uid("artifact-preview") });
    this.previewClose = h(
      "button",
      { type: "button", class: "icon-button", dataset: { testid: "artifact-preview-close" }, onclick: () => this.closePreview() },
      icon("close"),
    );
    this.previewText = h("pre", { class: "artifact-preview-text", tabindex: "0", dataset: { testid: "artifact-preview-text" } });
    this.preview = h(
      "section",
      {
        class: "artifact-preview",
        dataset: { testid: "artifact-preview" },
        "aria-labelledby": this.previewName.id,
        onkeydown: (event) => {
          if (event.key !== "Escape" || event.isComposing) return;
          event.preventDefault(); // handled: the pane around it stays open
          this.closePreview();
        },
      },
      h("div", { class: "artifact-preview-head" }, this.previewName, this.previewClose),
      this.previewText,
    );
    this.preview.hidden = true;
    this.root = h("div", { class: "artifacts" }, this.heading, this.list, this.status, this.preview);
    this.message = null; // {key, vars} of the status line
    this.shown = null; // {name, text} of the open preview
    this.items = [];
  }

  /** items: [{key, label, sizeBytes, contentType, read}] or null (the gateway has no artifacts). */
  update(items) {
    this.items = items ?? [];
    const keys = this.items.map((item) => item.key).join("\n");
    if (keys !== this.keys) {
      this.keys = keys; // another list (another conversation): its preview and message go
      if (this.shown && !this.items.some((item) => item.key === this.shown.key)) this.shown = null;
      this.message = null;
    }
    this.root.hidden = this.items.length === 0;
    setText(this.heading, t("details:artifacts"));
    this.rows.render(this.items);
    this.status.hidden = !this.message;
    setText(this.status, this.message ? t(this.message.key, this.message.vars) : "");
    this.preview.hidden = !this.shown;
    if (this.shown) {
      setText(this.previewName, t("details:artifact.preview", { name: this.shown.name }));
      setText(this.previewText, this.shown.text);
    }
    setAttr(this.previewClose, "aria-label", t("details:artifact.closePreview"));
    setAttr(this.previewClose, "title", t("details:artifact.closePreview"));
  }

  createRow(item) {
    const name = h("span", { class: "artifact-name", dataset: { testid: "artifact-name" } });
    const size = h("span", { class: "artifact-size muted", dataset: { testid: "artifact-size" } });
    const open = h("button", {
      type: "button",
      class: "link-button artifact-open",
      dataset: { testid: "artifact-open" },
      onclick: () => this.open(row.item, open),
    });
    const download = h(
      "button",
      { type: "button", class: "link-button artifact-download", dataset: { testid: "artifact-download" }, onclick: () => this.download(row.item) },
      h("span"),
    );
    const row = h(
      "li",
      { class: "artifact", dataset: { testid: "artifact-row" } },
      h("span", { class: "artifact-text" }, name, size),
      h("span", { class: "artifact-actions" }, open, download),
    );
    row.parts = { name, size, open, download };
    return row;
  }

  updateRow(row, item) {
    row.item = item;
    const { name, size, open, download } = row.parts;
    const shownSize = item.sizeBytes === null ? "" : formatBytes(item.sizeBytes);
    setAttr(row, "data-path", item.label);
    setText(name, item.label);
    setText(size, shownSize);
    open.hidden = !isTextType(item.contentType);
    setText(open, t("details:artifact.open"));
    setAttr(open, "aria-label", t("details:artifact.openLabel", { name: item.label }));
    setText(download.firstChild, t("details:artifact.download"));
    setAttr(download, "aria-label", t("details:artifact.downloadLabel", { name: item.label, size: shownSize }));
  }

  async fetch(item) {
    this.say("details:artifact.loading", { name: item.label });
    try {
      const got = await this.read(item);
      this.say(null);
      return got;
    } catch (error) {
      const size = item.sizeBytes === null ? "?" : formatBytes(item.sizeBytes);
      if (error?.tooLarge) this.say("details:artifact.tooLarge", { name: item.label, size });
      else this.say("details:artifact.failed", { name: item.label, message: describeError(error?.message ?? "") });
      return null;
    }
  }

  async open(item, opener) {
    this.opener = opener;
    const got = await this.fetch(item);
    if (!got) return;
    const text = new TextDecoder("utf-8", { fatal: false }).decode(got.bytes);
    if (text.includes("\u0000")) {
      this.say("details:artifact.binary", { name: item.label });
      return;
    }
    this.shown = { key: item.key, name: item.label, text };
    this.update(this.items);
    this.previewText.focus();
  }

  async download(item) {
    const got = await this.fetch(item);
    if (got) saveBytes(got.bytes, baseName(item.label));
  }

  closePreview() {
    this.shown = null;
    this.update(this.items);
    if (this.opener?.isConnected) this.opener.focus();
  }

  say(key, vars = {}) {
    this.message = key ? { key, vars } : null;
    this.update(this.items);
  }
}
