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

const pluralRules = new Map();

/** The CLDR plural category of `count` in `locale` ("one", "few", "many", "other", …). */
export function pluralCategory(count, locale = current) {
  if (!pluralRules.has(locale)) pluralRules.set(locale, new Intl.PluralRules(HTML_LANG[locale] ?? locale));
  return pluralRules.get(locale).select(count);
}

/** `key` in `locale`: with a numeric `count`, its plural form `<key>_<category>` when the
 * locale has one (the catalog's plural forms, Intl.PluralRules categories), else `<key>`. */
function template(locale, key, count) {
  const messages = loaded.get(locale);
  if (typeof count === "number") {
    const plural = lookup(messages, `${key}_${pluralCategory(count, locale)}`);
    if (plural !== undefined) return plural;
  }
  return lookup(messages, key);
}

/** The string for `key` with {{name}} placeholders filled from `vars`; a numeric
 * `vars.count` picks the plural form. */
export function t(key, vars = {}) {
  const text = template(current, key, vars.count) ?? template("en", key, vars.count) ?? key;
  return text.replace(/\{\{(\w+)\}\}/g, (match, name) =>
    name in vars ? String(vars[name]) : match,
  );
}

/** An error message for people: an i18n key ("app:errors.closed") is translated, a gateway
 * error text is shown as the gateway wrote it. */
export function describeError(message) {
  return /^[a-z]+:[\w.]+$/.test(message) ? t(message) : message;
}

/** "3 minutes ago" in the current language (Intl, no strings of our own needed). A time a
 * little ahead of this browser's clock (clock skew) is "now", never "in 5 seconds". */
export function timeAgo(epochMs, now = Date.now()) {
  const seconds = Math.min(0, Math.round((epochMs - now) / 1000));
  const format = new Intl.RelativeTimeFormat(HTML_LANG[current], { numeric: "auto", style: "long" });
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
    if (Math.abs(Math.round(value)) < size) return format.format(Math.round(value) || 0, unit);
    value /= size;
  }
  return format.format(Math.round(value), "year");
}

/** A run's duration, "1 min, 5 sec" (Intl.DurationFormat, else unit numbers); under a second
 * it is the catalog's "< 1 s". */
export function formatDuration(totalSeconds) {
  const seconds = Math.max(0, Math.round(totalSeconds));
  if (seconds === 0) return t("chat:completion.underSecond");
  const parts = { hours: Math.floor(seconds / 3600), minutes: Math.floor((seconds % 3600) / 60), seconds: seconds % 60 };
  const locale = HTML_LANG[current];
  if (typeof Intl.DurationFormat === "function") {
    return new Intl.DurationFormat(locale, { style: "short" }).format(parts);
  }
  const units = [["hours", "hour"], ["minutes", "minute"], ["seconds", "second"]];
  return units
    .filter(([name]) => parts[name] > 0)
    .map(([name, unit]) => new Intl.NumberFormat(locale, { style: "unit", unit, unitDisplay: "short" }).format(parts[name]))
    .join(" ");
}

/** A file size: "512 B", "1.2 kB", "3.4 MB" (decimal units, in the current language). */
export function formatBytes(bytes) {
  const size = Math.max(0, Number(bytes) || 0);
  const locale = HTML_LANG[current];
  if (size < 1000) return t("details:sizeBytes", { size: new Intl.NumberFormat(locale).format(size) });
  const units = ["kilobyte", "megabyte", "gigabyte", "terabyte"];
  let value = size / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  const digits = value < 10 ? 1 : 0;
  return new Intl.NumberFormat(locale, { style: "unit", unit: units[unit], unitDisplay: "short", maximumFractionDigits: digits }).format(value);
}
