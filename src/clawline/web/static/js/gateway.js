// The gateway WebSocket protocol (OpenClaw-compatible): frames,
// the connect handshake with token auth, requests and events. Errors raised here (not by the
// gateway) carry an i18n key as their message; describeError() shows either kind.

const PROTOCOL = { min: 3, max: 4 };
const CONNECT_TIMEOUT_MS = 10000;

export class GatewayError extends Error {
  constructor(message, code = "UNAVAILABLE", details = undefined) {
    super(message);
    this.name = "GatewayError";
    this.code = code;
    this.details = details;
  }

  // The gateway names the refusing class in details.errorClass: decide on it, not the text.
  get unauthorized() {
    return this.details?.errorClass === "Unauthorized";
  }
}

let counter = 0;
function requestId() {
  counter += 1;
  return `web-${Date.now().toString(36)}-${counter}`;
}

/** The WebSocket URL of the gateway serving this page. */
export function gatewayUrl(location = window.location) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/ws`;
}

/**
 * One connection. `open()` resolves with the hello-ok payload; `onEvent(name, payload, seq)`
 * gets every event after it; `onClose()` is called once when the socket closes.
 */
export class GatewayConnection {
  constructor({ url, token, locale, onEvent, onClose }) {
    this.url = url;
    this.token = token;
    this.locale = locale;
    this.onEvent = onEvent;
    this.onClose = onClose;
    this.pending = new Map();
    this.socket = null;
    this.closed = false;
  }

  open() {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.url);
      this.socket = socket;
      let connected = false;
      const timer = setTimeout(() => {
        reject(new GatewayError("app:errors.handshakeTimeout"));
        socket.close();
      }, CONNECT_TIMEOUT_MS);
      socket.addEventListener("message", (message) => {
        const frame = parseFrame(message.data);
        if (!frame) return;
        if (!connected && frame.type === "event" && frame.event === "connect.challenge") {
          this.request("connect", this.connectParams()).then(
            (hello) => {
              connected = true;
              clearTimeout(timer);
              resolve(hello);
            },
            (error) => {
              clearTimeout(timer);
              reject(error);
              socket.close();
            },
          );
          return;
        }
        this.receive(frame);
      });
      socket.addEventListener("close", () => {
        clearTimeout(timer);
        this.closed = true;
        for (const { reject: fail } of this.pending.values()) {
          fail(new GatewayError("app:errors.closed"));
        }
        this.pending.clear();
        if (!connected) reject(new GatewayError("app:errors.unreachable"));
        else this.onClose?.();
      });
    });
  }

  connectParams() {
    const params = {
      minProtocol: PROTOCOL.min,
      maxProtocol: PROTOCOL.max,
      client: {
        id: "openclaw-control-ui",
        displayName: "clawline web chat",
        version: "web",
        platform: "web",
        mode: "webchat",
      },
      role: "operator",
      scopes: ["operator.admin"],
      caps: ["tool-events"],
      locale: this.locale,
      userAgent: navigator.userAgent.slice(0, 1000),
    };
    if (this.token) params.auth = { token: this.token };
    return params;
  }

  receive(frame) {
    if (frame.type === "res") {
      const waiter = this.pending.get(frame.id);
      if (!waiter) return;
      this.pending.delete(frame.id);
      if (frame.ok) waiter.resolve(frame.payload ?? null);
      else {
        const error = frame.error ?? {};
        waiter.reject(new GatewayError(error.message ?? "app:errors.failed", error.code, error.details));
      }
    } else if (frame.type === "event" && frame.event !== "tick") {
      this.onEvent?.(frame.event, frame.payload ?? {}, frame.seq);
    }
  }

  request(method, params = {}) {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(new GatewayError("app:errors.notConnected"));
    }
    const id = requestId();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ type: "req", id, method, params }));
    });
  }

  close() {
    this.onClose = null;
    this.socket?.close();
  }
}

function parseFrame(data) {
  try {
    const frame = JSON.parse(data);
    return frame && typeof frame === "object" ? frame : null;
  } catch {
    return null;
  }
}

/** A random idempotency key (crypto.randomUUID needs a secure context; this does not). */
export function randomKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
