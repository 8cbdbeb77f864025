// Small DOM helpers: element creation, keyed list updates, ids. Text goes in as text nodes,
// so nothing from the gateway is ever parsed as markup.

let nextId = 0;

/** A document-unique id with a readable prefix. */
export function uid(prefix) {
  nextId += 1;
  return `${prefix}-${nextId}`;
}

/**
 * h("button", {type: "button", class: "x", onclick: fn, "aria-label": "…"}, "text", child)
 * Props: `class`, `text`, `on<event>`, `dataset` ({testid: …} → data-testid), boolean
 * attributes (true → "", false/null/undefined → absent), everything else as an attribute.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  append(el, children);
  return el;
}

export function setProps(el, props) {
  for (const [name, value] of Object.entries(props)) {
    if (name === "class") el.className = value ?? "";
    else if (name === "text") el.textContent = value ?? "";
    else if (name === "dataset") Object.assign(el.dataset, value);
    else if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else setAttr(el, name, value);
  }
}

/** Set, replace or remove one attribute; only touches the DOM when the value changes. */
export function setAttr(el, name, value) {
  if (value === false || value === null || value === undefined) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
    return;
  }
  const text = value === true ? "" : String(value);
  if (el.getAttribute(name) !== text) el.setAttribute(name, text);
}

export function setText(el, text) {
  const value = text ?? "";
  if (el.textContent !== value) el.textContent = value;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Make `parent`'s children exactly `nodes`, in order, moving only what is out of place. */
export function placeChildren(parent, nodes) {
  let cursor = parent.firstChild;
  for (const node of nodes) {
    if (node === cursor) {
      cursor = cursor.nextSibling;
    } else {
      parent.insertBefore(node, cursor);
    }
  }
  while (cursor) {
    const next = cursor.nextSibling;
    parent.removeChild(cursor);
    cursor = next;
  }
}

/**
 * Keyed list rendering: one element per item key, created once by `create(item)` and refreshed
 * by `update(el, item)`; elements of vanished keys are dropped. Focus stays on a row that
 * survives an update because its element is kept.
 */
export class KeyedList {
  constructor(container, keyOf, create, update) {
    this.container = container;
    this.keyOf = keyOf;
    this.create = create;
    this.update = update;
    this.elements = new Map();
  }

  render(items) {
    const next = new Map();
    const nodes = [];
    for (const item of items) {
      const key = this.keyOf(item);
      let el = this.elements.get(key);
      if (!el) el = this.create(item);
      this.update(el, item);
      next.set(key, el);
      nodes.push(el);
    }
    this.elements = next;
    placeChildren(this.container, nodes);
  }
}
