// Inline SVG icons (24×24, stroked with currentColor), drawn for clawline. Decorative: every
// icon is aria-hidden; the text next to it (or an aria-label) carries the meaning.

const SVG = "http://www.w3.org/2000/svg";

const SHAPES = {
  bot: [
    ["rect", { x: 4, y: 8, width: 16, height: 12, rx: 3 }],
    ["path", { d: "M12 8V4M9 4h6" }],
    ["path", { d: "M2 13v3M22 13v3" }],
    ["path", { d: "M9 13v1.5M15 13v1.5" }],
  ],
  botMessage: [
    ["path", { d: "M4 5h16a1 1 0 0 1 1 1v10a1 1 0 0 1-1 1H10l-4 3v-3H4a1 1 0 0 1-1-1V6a1 1 0 0 1 1-1z" }],
    ["path", { d: "M9 10v1.5M15 10v1.5" }],
  ],
  loader: [
    ["path", { d: "M12 3a9 9 0 1 0 9 9", class: "icon-arc" }],
  ],
  plus: [["path", { d: "M12 5v14M5 12h14" }]],
  trash: [
    ["path", { d: "M4 7h16M10 11v6M14 11v6" }],
    ["path", { d: "M6 7l1 13h10l1-13M9 7V4h6v3" }],
  ],
  arrowLeft: [["path", { d: "M19 12H5M11 6l-6 6 6 6" }]],
  tree: [
    ["circle", { cx: 6, cy: 5, r: 2 }],
    ["circle", { cx: 6, cy: 19, r: 2 }],
    ["circle", { cx: 18, cy: 12, r: 2 }],
    ["path", { d: "M6 7v10M6 12h10" }],
  ],
  tasks: [
    ["path", { d: "M10 6h10M10 12h10M10 18h10" }],
    ["path", { d: "M3 6l1.5 1.5L7 5M3 12l1.5 1.5L7 11M3 18l1.5 1.5L7 17" }],
  ],
  send: [["path", { d: "M4 12l16-8-6 16-2-7-8-1z" }]],
  close: [["path", { d: "M6 6l12 12M18 6L6 18" }]],
  menu: [["path", { d: "M4 6h16M4 12h16M4 18h16" }]],
  refresh: [["path", { d: "M20 12a8 8 0 1 1-2.34-5.66M20 4v5h-5" }]],
  logout: [["path", { d: "M15 4h4v16h-4M10 8l-4 4 4 4M6 12h10" }]],
  dot: [["circle", { cx: 12, cy: 12, r: 4, class: "icon-fill" }]],
  check: [["path", { d: "M5 12l5 5 9-10" }]],
  chevronUp: [["path", { d: "M6 15l6-6 6 6" }]],
  chevronDown: [["path", { d: "M6 9l6 6 6-6" }]],
};

/** An <svg> element for the named icon; `className` adds classes (e.g. "spin"). */
export function icon(name, className = "") {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  svg.setAttribute("class", `icon icon-${name} ${className}`.trim());
  svg.dataset.icon = name;
  for (const [tag, attrs] of SHAPES[name]) {
    const shape = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs)) shape.setAttribute(key, String(value));
    svg.append(shape);
  }
  return svg;
}

/** The run-state icon: a spinner while busy, else a bot. */
export function runIcon(busy) {
  return busy ? icon("loader", "spin status-busy") : icon("bot", "status-idle");
}

/** Replace `holder`'s icon only when the wanted one differs (keeps the spinner's animation). */
export function swapIcon(holder, name, make) {
  const current = holder.querySelector("svg");
  if (current && current.dataset.icon === name) return;
  holder.replaceChildren(make());
}
