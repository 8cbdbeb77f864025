// Localised strings: /static/i18n/<locale>.json, nested by namespace ("chat", "app", …);
// a key always names its namespace: "<namespace>:<dotted.path>".
// t("chat:acp.subagentSessions.count", {count: 2}) → "Dispatched 2 subagents".
// English is always loaded as the fallback for a key a locale lacks (the parity test in
// tests/web keeps every locale complete, so this only guards a stale cache).

export const LOCALES = ["en", "zh", "ja", "ru"];
export const LOCALE_NAMES = { en: "English", zh: "中文", ja: "日本語", ru: "Русский" };
const STORAGE_KEY = "clawline.locale";
const HTML_LANG = { en: "en", zh: "zh-CN", ja: "ja", ru: "ru" };

const loaded = new Map();
let current = "en";

async function fetchLocale(locale) {
  if (!loaded.has(locale)) {
    const response = await fetch(`/static/i18n/${locale}.json`, { cache: "no-cache" });
    if (!response.ok) throw new Error(`locale ${locale}: HTTP ${response.status}`);
    loaded.set(locale, await response.json());
  }
  return loaded.get(locale);
}

function storedLocale() {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

/** The saved choice, else the browser's first supported language, else English. */
export function preferredLocale() {
  const saved = storedLocale();
  if (LOCALES.includes(saved)) return saved;
  for (const tag of navigator.languages ?? [navigator.language]) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (LOCALES.includes(base)) return base;
  }
  return "en";
}

/** Load and switch to `locale`; `persist` saves the choice for later visits. */
export async function setLocale(locale, { persist = false } = {}) {
  const chosen = LOCALES.includes(locale) ? locale : "en";
  await Promise.all([fetchLocale("en"), fetchLocale(chosen)]);
  current = chosen;
  document.documentElement.lang = HTML_LANG[chosen];
  if (persist) {
    try {
      localStorage.setItem(STORAGE_KEY, chosen);
    } catch {
      // storage disabled: the choice lasts for this page only
    }
  }
}

export function currentLocale() {
  return current;
}

function lookup(messages, key) {
  const colon = key.indexOf(":");
  if (colon < 0) return undefined;
  const namespace = key.slice(0, colon);
  const path = key.slice(colon + 1);
  let node = messages?.[namespace];
  for (const part of path.split(".")) {
    if (node === undefined || node === null) return undefined;
    node = node[part];
  }
  return typeof node === "string" ? node : undefined;
}

/** The string for `key` with {{name}} placeholders filled from `vars`. */
export function t(key, vars = {}) {
  const template = lookup(loaded.get(current), key) ?? lookup(loaded.get("en"), key) ?? key;
  return template.replace(/\{\{(\w+)\}\}/g, (match, name) =>
    name in vars ? String(vars[name]) : match,
  );
}

/** An error message for people: an i18n key ("app:errors.closed") is translated, a gateway
 * error text is shown as the gateway wrote it. */
export function describeError(message) {
  return /^[a-z]+:[\w.]+$/.test(message) ? t(message) : message;
}

/** "3 minutes ago" in the current language (Intl, no strings of our own needed). */
export function timeAgo(epochMs, now = Date.now()) {
  const seconds = Math.round((epochMs - now) / 1000);
  const format = new Intl.RelativeTimeFormat(HTML_LANG[current], { numeric: "auto", style: "narrow" });
  const steps = [
    [60, "second"],
    [60, "minute"],
    [24, "hour"],
    [7, "day"],
    [4.35, "week"],
    [12, "month"],
  ];
  let value = seconds;
  for (const [size, unit] of steps) {
    if (Math.abs(value) < size) return format.format(Math.round(value), unit);
    value /= size;
  }
  return format.format(Math.round(value), "year");
}
