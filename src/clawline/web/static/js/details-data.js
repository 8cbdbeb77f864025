// The details of the selected conversation: its family's lineage tree (one indexed
// sessions.list {rootSessionKey} query; live through the catalog), its tasks (tasks.list) and,
// when the gateway has the XWorkmate plugin, the artifacts of its task runs.

const ARTIFACT_RUNS = 5;
const TASKS_DEBOUNCE_MS = 250;

export class Details {
  constructor(app) {
    this.app = app;
    this.tasksTimer = null;
    this.treeRoot = null;
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
          if (!found.has(id)) found.set(id, { key: id, label: item.relativePath });
        }
      } catch {
        // a run without an artifact scope has nothing to show
      }
    }
    return [...found.values()];
  }
}
