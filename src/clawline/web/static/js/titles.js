// What a session is called, everywhere the page names one (sidebar, sub-agent panel, lineage
// tree, header, window title, completion cards, "From …" of a child's task): one function.
//
// A session's base title is, first that is not blank: its label; for a sub-agent its task's
// first line (from a task record or its first message); its display name; its derived (or
// ACP) title with "[Subagent Context]" removed, cut at its first line; else its key. Whitespace
// is collapsed and a literal "\n" (backslash, n) counts as a line break. Siblings (the same
// parent) whose base titles are equal get their short id appended, so they can be told apart.

import { isStandInTitle } from "./catalog.js";
import { SUBAGENT_CONTEXT } from "./family.js";
import { parentOf } from "./lineage.js";

const SUBAGENT_TASK = "[Subagent Task]:";
const MAX_TITLE = 80;

/** Collapse runs of white space to one space and trim. */
export function collapse(text) {
  return String(text ?? "").replace(/\s+/g, " ").trim();
}

/** The first non-blank line of `text` (a real line break or a literal "\n"), collapsed and cut
 * at 80 characters. */
export function firstLine(text) {
  const lines = String(text ?? "").split(/\r\n|\r|\n|\\n/);
  const line = collapse(lines.find((part) => part.trim() !== "") ?? "");
  return line.length > MAX_TITLE ? `${line.slice(0, MAX_TITLE - 1).trimEnd()}…` : line;
}

/** The task of a spawned child's first message (after "[Subagent Task]:"), or null. */
export function taskOfMessage(text) {
  if (typeof text !== "string" || !text.startsWith(SUBAGENT_CONTEXT)) return null;
  const at = text.indexOf(SUBAGENT_TASK);
  return at < 0 ? null : text.slice(at + SUBAGENT_TASK.length).trim();
}

/** A derived or ACP title for display: marker removed, first line. */
function shownTitle(title) {
  let text = typeof title === "string" ? title : "";
  if (text.startsWith(SUBAGENT_CONTEXT)) text = text.slice(SUBAGENT_CONTEXT.length);
  return firstLine(text);
}

/** The short id of a key: the first 8 characters of its last part. */
export function shortId(key) {
  return String(key).split(":").pop().slice(0, 8);
}

/**
 * Titles of one render. `catalog`: the page's catalog; `taskOf(key)`: a sub-agent's task
 * `{label, task}` (what the page learnt from tasks.list and child transcripts) or undefined;
 * `acpTitles`: Map key → ACP title (the loaded family); `untitled`: what a chat without a first
 * message is called. Results are cached for the instance's life: make one per render.
 */
export class Titles {
  constructor({ catalog, taskOf = () => undefined, acpTitles = new Map(), untitled = null }) {
    this.catalog = catalog;
    this.taskOf = taskOf;
    this.acpTitles = acpTitles;
    this.untitled = untitled;
    this.bases = new Map();
    this.siblings = null;
  }

  /** The title without a sibling suffix. */
  base(key) {
    if (!this.bases.has(key)) this.bases.set(key, this.compute(key));
    return this.bases.get(key);
  }

  compute(key) {
    const row = this.catalog.get(key);
    const task = this.taskOf(key);
    const derived = this.untitled && isStandInTitle(row, row?.derivedTitle) ? this.untitled : row?.derivedTitle;
    const candidates = [
      row?.label,
      task?.label,
      task?.task === undefined ? null : firstLine(task.task),
      row?.displayName,
      shownTitle(derived),
      shownTitle(this.acpTitles.get(key)),
    ];
    for (const candidate of candidates) {
      const text = typeof candidate === "string" ? firstLine(candidate) : "";
      if (text) return text;
    }
    return key;
  }

  /** The title of `key`: its base title, with its short id when a sibling has the same. */
  of(key) {
    const base = this.base(key);
    const parent = parentOf(this.catalog.get(key));
    if (!parent) return base;
    const same = (this.siblingsOf(parent) ?? []).filter((other) => this.base(other) === base);
    return same.length > 1 ? `${base} · ${shortId(key)}` : base;
  }

  siblingsOf(parent) {
    if (!this.siblings) {
      this.siblings = new Map();
      for (const row of this.catalog.values()) {
        const of = parentOf(row);
        if (!of) continue;
        if (!this.siblings.has(of)) this.siblings.set(of, []);
        this.siblings.get(of).push(row.key);
      }
    }
    return this.siblings.get(parent);
  }
}
