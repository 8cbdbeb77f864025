// The token form shown when the gateway asks for a token. The token is kept in
// sessionStorage (this tab only) and sent in the connect handshake's auth.token.

import { h, setAttr, setText } from "./dom.js";
import { describeError, LOCALE_NAMES, LOCALES, t } from "./i18n.js";

const TOKEN_KEY = "clawline.token";

export function savedToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function saveToken(token) {
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // storage disabled: the token lasts until the page is closed or reloaded
  }
}

export class LoginForm {
  constructor({ onSubmit, onLocale }) {
    this.heading = h("h1", { class: "login-heading" });
    this.hint = h("p", { class: "muted", id: "login-hint" });
    this.label = h("label", { for: "login-token" });
    this.input = h("input", {
      id: "login-token",
      type: "password",
      autocomplete: "current-password",
      required: true,
      "aria-describedby": "login-hint",
      dataset: { testid: "login-token" },
    });
    this.error = h("p", { class: "login-error", role: "alert", dataset: { testid: "login-error" } });
    this.submit = h("button", { type: "submit", class: "primary", dataset: { testid: "login-submit" } });
    this.languageLabel = h("label", { for: "login-language", class: "sr-only" });
    this.language = h(
      "select",
      { id: "login-language", dataset: { testid: "login-language" }, onchange: (e) => onLocale(e.target.value) },
      ...LOCALES.map((code) => h("option", { value: code, lang: code, text: LOCALE_NAMES[code] })),
    );
    this.form = h(
      "form",
      {
        class: "login-form",
        dataset: { testid: "login-form" },
        onsubmit: (event) => {
          event.preventDefault();
          const token = this.input.value.trim();
          if (token) onSubmit(token);
        },
      },
      this.heading,
      this.hint,
      this.label,
      this.input,
      this.error,
      this.submit,
      h("div", { class: "login-language" }, this.languageLabel, this.language),
    );
    this.root = h("main", { class: "login" }, this.form);
  }

  /** view: {error: string|null, busy: boolean, locale} */
  update(view) {
    setText(this.heading, t("app:login.title"));
    setText(this.hint, t("app:login.hint"));
    setText(this.label, t("app:login.token"));
    setText(this.submit, t("app:login.submit"));
    setAttr(this.submit, "disabled", view.busy);
    setText(this.error, view.error ? t("app:login.failed", { message: describeError(view.error) }) : "");
    this.error.hidden = !view.error;
    setText(this.languageLabel, t("app:language"));
    if (this.language.value !== view.locale) this.language.value = view.locale;
  }

  focus() {
    this.input.focus();
  }
}
