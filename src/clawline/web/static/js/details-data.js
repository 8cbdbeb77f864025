// The details of the selected conversation: its family's lineage tree (one indexed
// sessions.list {rootSessionKey} query; live through the catalog), its tasks (tasks.list) and,
// when the gateway has the XWorkmate plugin, the artifacts of its task runs — listed with
// xworkmate.artifacts.list and read (to open or download) with xworkmate.artifacts.read, the
// plugin's confined read of one artifact by its signed reference. Every task seen also tells
// the titles (titles.js) what its child was asked to do.

const ARTIFACT_RUNS = 5;
const TASKS_DEBOUNCE_MS = 250;

export class Details {
  constructor(app) {
    this.app = app;
    this.tasksTimer = null;
    this.treeRoot = null;
    this.taskInfo = new Map(); // child session key → {label, task} of the task that spawned it
  }

  toggle() {
    this.app.detailsOpen = !this.app.detailsOpen;
    if (this.app.detailsOpen) this.loadTree();
    this.app.view.render();
  }

  treeRootOf(key) {
    const row = this.app.catalog.get(key);
    return row?.rootSessionKey ?? row?.lineagePath?.[0] ?? key;
  }

  async loadTree() {
    const root = this.treeRootOf(this.app.selectedKey);
    if (!root) return;
    this.treeRoot = root;
    try {
      const params = { rootSessionKey: root, limit: 1000, includeDerivedTitles: true };
      const answer = await this.app.request("sessions.list", params);
      this.app.catalog.putRows(answer.sessions, answer.ts);
    } catch (error) {
      this.app.showNotice(error.message);
    }
    this.app.view.render();
  }

  /** Whether a change of `key` may change the tasks shown (the session or one of its children). */
  concerns(key) {
    if (key === this.app.selectedKey) return true;
    const family = this.app.family.familyOf(this.app.selectedKey);
    return Boolean(family?.children.some((child) => child.sessionKey === key));
  }

  scheduleTasks() {
    clearTimeout(this.tasksTimer);
    this.tasksTimer = setTimeout(() => this.loadTasks(this.app.selectedKey), TASKS_DEBOUNCE_MS);
  }

  async loadTasks(key) {
    if (!key) return;
    try {
      const answer = await this.app.request("tasks.list", { sessionKey: key, limit: 100 });
      const tasks = answer.tasks ?? [];
      this.noteTasks(tasks);
      const artifacts = await this.loadArtifacts(key, tasks);
      if (this.app.selectedKey !== key) return;
      this.app.tasks = { key, items: tasks, artifacts };
      this.app.view.schedule();
    } catch {
      // tasks are extra information: the conversation works without them
    }
  }

  /**
   * Artifacts of the newest task runs, when the gateway has the XWorkmate plugin
   * (xworkmate.artifacts.list {openclawSessionKey, runId}); null when it has not.
   */
  async loadArtifacts(key, tasks) {
    if (!this.app.methods.has("xworkmate.artifacts.list")) return null;
    const found = new Map();
    for (const task of tasks.filter((t) => t.runId).slice(0, ARTIFACT_RUNS)) {
      const params = { openclawSessionKey: task.childSessionKey ?? key, runId: task.runId };
      try {
        const answer = await this.app.request("xworkmate.artifacts.list", params);
        for (const item of answer?.artifacts ?? []) {
          const id = `${item.relativePath}\u0000${item.sha256 ?? ""}`;
          if (found.has(id)) continue;
          found.set(id, {
            key: id,
            label: item.relativePath,
            sizeBytes: typeof item.sizeBytes === "number" ? item.sizeBytes : null,
            contentType: typeof item.contentType === "string" ? item.contentType : "",
            read: { ...params, artifactRef: item.artifactRef },
          });
        }
      } catch {
        // a run without an artifact scope has nothing to show
      }
    }
    return [...found.values()];
  }

  /** Remember what each child was asked to do (its title, titles.js). */
  noteTasks(tasks) {
    for (const task of tasks) {
      const key = task?.childSessionKey;
      if (typeof key === "string" && key && typeof task.task === "string") {
        this.taskInfo.set(key, { label: task.label ?? null, task: task.task });
      }
    }
  }

  /**
   * One artifact's bytes (xworkmate.artifacts.read by its signed reference: the plugin reads
   * it confined to the run's scope, inlined up to its maxInlineBytes). Resolves to
   * `{bytes: Uint8Array, contentType}`; rejects with `{tooLarge: true}` when the gateway
   * described the file without its content, or with the gateway's error.
   */
  async readArtifact(item) {
    const answer = await this.app.request("xworkmate.artifacts.read", item.read);
    const artifact = answer?.artifacts?.[0];
    if (!artifact || typeof artifact.content !== "string") throw Object.assign(new Error("too large"), { tooLarge: true });
    const binary = atob(artifact.content);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    return { bytes, contentType: artifact.contentType || item.contentType };
  }
}
