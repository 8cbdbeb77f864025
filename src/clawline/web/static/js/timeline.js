// The selected conversation's timeline: transcript messages (chat.history, session.message,
// chat final), the assistant text streaming in `chat` deltas, and tool cards from transcript
// tool calls/results and live `agent` tool events. A parent's completion events become
// completion cards (completion.js); a child's first message, its parent agent's task, a task item.

import { COMPLETION_MARKER, completionCards } from "./completion.js";
import { isNativeSubagentKey } from "./runstate.js";
import { taskOfMessage } from "./titles.js";

export function textOf(message) {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((block) => block && block.type === "text" && typeof block.text === "string")
    .map((block) => block.text)
    .join("\n");
}

export class Timeline {
  constructor(key) {
    this.key = key;
    this.loaded = false;
    this.messages = new Map();
    this.liveText = new Map();
    this.liveTools = new Map();
    this.errors = new Map();
    this.subagentTask = null; // a sub-agent session's task, from its first message
  }

  loadHistory(messages) {
    // Merged by id, not replaced: a live message (a first message sent while the history of a
    // just created chat was on its way) may be newer than the answer.
    for (const message of messages ?? []) this.addMessage(message);
    this.loaded = true;
  }

  addMessage(message) {
    if (!message || typeof message.id !== "string") return;
    this.messages.set(message.id, message);
    if (message.role === "user" && this.subagentTask === null && isNativeSubagentKey(this.key)) {
      this.subagentTask = taskOfMessage(textOf(message));
    }
  }

  /** A `chat` event of this session. */
  chatEvent(payload) {
    const runId = payload.runId;
    if (payload.state === "delta") {
      this.liveText.set(runId, textOf(payload.message));
      return;
    }
    this.liveText.delete(runId);
    if (payload.state === "final") this.addMessage(payload.message);
    if (payload.state === "error") this.errors.set(runId, payload.errorMessage ?? "error");
  }

  /** An `agent` event of this session: tool activity updates its card. */
  agentEvent(payload) {
    if (payload.stream !== "tool") return;
    const data = payload.data ?? {};
    if (typeof data.toolCallId !== "string") return;
    const previous = this.liveTools.get(data.toolCallId) ?? {};
    this.liveTools.set(data.toolCallId, {
      name: data.name ?? previous.name,
      phase: data.phase,
      args: data.args ?? previous.args,
      result: data.phase === "result" ? data.result : previous.result,
      isError: data.isError === true,
    });
  }

  ordered() {
    return [...this.messages.values()].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
  }

  /** Tool cards in timeline order: {toolCallId, title, status, args, details}. */
  toolItems() {
    return this.items().filter((item) => item.kind === "tool");
  }

  /** What the conversation view shows, in order. */
  items() {
    const ordered = this.ordered();
    const results = new Map();
    for (const message of ordered) {
      if (message.role === "tool" && typeof message.toolCallId === "string") {
        results.set(message.toolCallId, message);
      }
    }
    const items = [];
    const carded = new Set();
    const card = (id, name, args) => {
      carded.add(id);
      items.push(this.toolCard(id, name, args, results.get(id)));
    };
    for (const message of ordered) {
      const text = textOf(message);
      if (message.role === "user") {
        items.push(...this.userItems(message, text));
      } else if (message.role === "assistant") {
        if (text) items.push({ kind: "assistant", id: message.id, text });
        for (const call of message.toolCalls ?? []) card(call.id, call.name, call.arguments);
      } else if (message.role === "tool" && !carded.has(message.toolCallId)) {
        card(message.toolCallId, message.name, undefined);
      }
    }
    for (const [id, live] of this.liveTools) {
      if (!carded.has(id)) card(id, live.name, live.args);
    }
    for (const [runId, text] of this.liveText) {
      if (text) items.push({ kind: "assistant", id: `live:${runId}`, text, streaming: true });
    }
    for (const [runId, message] of this.errors) {
      items.push({ kind: "error", id: `error:${runId}`, text: message });
    }
    return items;
  }

  /** A user message as items: completion cards, the parent's task (in a sub-agent session), a
   * collapsed internal message (an event the page cannot read), or the user's own words. */
  userItems(message, text) {
    const cards = completionCards(message, text);
    if (cards && cards.length > 0) {
      return cards.map((card, index) => ({ kind: "completion", id: `${message.id}:${index}`, ...card }));
    }
    if (text.includes(COMPLETION_MARKER)) return [{ kind: "user", id: message.id, text, internal: true }];
    const task = isNativeSubagentKey(this.key) ? taskOfMessage(text) : null;
    if (task !== null) return [{ kind: "task", id: message.id, text: task }];
    return [{ kind: "user", id: message.id, text, internal: false }];
  }

  toolCard(id, name, args, result) {
    const live = this.liveTools.get(id);
    let status = "pending";
    let details;
    if (result) {
      status = result.isError ? "failed" : "completed";
      details = result.details;
    } else if (live?.phase === "result") {
      status = live.isError ? "failed" : "completed";
      details = live.result;
    } else if (live) {
      status = "in_progress";
    }
    return {
      kind: "tool",
      id: `tool:${id}`,
      toolCallId: id,
      title: name ?? live?.name ?? "tool",
      status,
      args: args ?? live?.args,
      details,
    };
  }
}
