// Completion events: the message a parent receives when its sub-agents finish. The gateway
// stores the events' structured fields in the transcript message's `internalEvents`
// (`{type: "task_completion", childSessionKey, taskLabel, status, statusLabel, result,
// statsLine}`, docs/web.md); a message without them (another gateway, an older transcript) is
// read from its text, OpenClaw's event layout. Either way the page shows cards, never the
// internal text.

export const COMPLETION_MARKER = "[Internal task completion event]";
const BEGIN = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>";
const RESULT_BEGIN = "<<<BEGIN_UNTRUSTED_CHILD_RESULT>>>";
const RESULT_END = "<<<END_UNTRUSTED_CHILD_RESULT>>>";
const NO_OUTPUT = "(no output)";
const STATUSES = new Set(["ok", "error", "timeout"]);

/** Seconds of "runtime 1h 2m", "runtime 3m 4s", "runtime 5s" in a stats line, or null. */
export function runtimeSeconds(stats) {
  const match = /\bruntime\s+(?:(\d+)h\s*)?(?:(\d+)m\s*)?(?:(\d+)s)?/.exec(String(stats ?? ""));
  if (!match || match.slice(1).every((part) => part === undefined)) return null;
  const [hours, minutes, seconds] = match.slice(1).map((part) => Number(part ?? 0));
  return hours * 3600 + minutes * 60 + seconds;
}

function statusOf(status, label) {
  if (STATUSES.has(status)) return status;
  const text = String(label ?? "").toLowerCase();
  if (text.startsWith("completed")) return "ok";
  if (text.startsWith("timed out")) return "timeout";
  if (text.startsWith("failed")) return "error";
  return "unknown";
}

/** The error text of a failed event's status label ("failed: boom" → "boom"), or null. */
function errorOf(status, label) {
  if (status !== "error") return null;
  const text = String(label ?? "");
  const colon = text.indexOf(":");
  const detail = colon < 0 ? "" : text.slice(colon + 1).trim();
  return detail || null;
}

function card(fields) {
  const status = statusOf(fields.status, fields.statusLabel);
  const result = typeof fields.result === "string" ? fields.result.trim() : "";
  return {
    childSessionKey: typeof fields.childSessionKey === "string" ? fields.childSessionKey : null,
    taskLabel: typeof fields.taskLabel === "string" ? fields.taskLabel : "",
    status,
    error: errorOf(status, fields.statusLabel),
    result: result === NO_OUTPUT ? "" : result,
    seconds: runtimeSeconds(fields.statsLine),
  };
}

/** One event block of OpenClaw's text layout → its fields. */
function parseBlock(block) {
  const fields = {};
  const head = block.split(RESULT_BEGIN)[0];
  for (const line of head.split("\n")) {
    const match = /^(session_key|task|status):\s*(.*)$/.exec(line);
    if (match) fields[match[1]] = match[2];
  }
  const begin = block.indexOf(RESULT_BEGIN);
  const end = block.indexOf(RESULT_END);
  const result = begin >= 0 && end > begin ? block.slice(begin + RESULT_BEGIN.length, end) : "";
  const stats = block.slice(end >= 0 ? end : 0).split("\n").find((line) => line.startsWith("Stats:"));
  return {
    childSessionKey: fields.session_key,
    taskLabel: fields.task,
    statusLabel: fields.status,
    result,
    statsLine: stats,
  };
}

/**
 * The completion cards of a transcript message, or null when it is no completion event:
 * [{childSessionKey, taskLabel, status: ok|error|timeout|unknown, error, result, seconds}].
 */
export function completionCards(message, text) {
  const events = Array.isArray(message?.internalEvents)
    ? message.internalEvents.filter((event) => event && event.type === "task_completion")
    : [];
  if (events.length > 0) return events.map(card);
  if (typeof text !== "string" || !text.includes(COMPLETION_MARKER)) return null;
  const blocks = text.split(BEGIN).filter((block) => block.includes(COMPLETION_MARKER));
  return blocks.map((block) => card(parseBlock(block)));
}
