// Entry point: start the web chat in #app.

import { App } from "./app.js";

const app = new App(document.getElementById("app"));
app.start().catch((error) => {
  document.getElementById("app").textContent = `clawline: ${error.message}`;
});
