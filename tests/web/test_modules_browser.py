"""The page's pure modules, run in the browser (ES modules as served, under the page's CSP):
run projection, attention, catalog merge rules, family loading with stale-response rejection,
the spawn signature, visible children, child view and title cleaning (docs/web.md;
ClawX's rules)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page

from tests.web.conftest import modules_page

# One gateway, browser and page for the whole module: these tests only evaluate modules.
pytestmark = pytest.mark.asyncio(loop_scope="module")

MODULES = """async () => {
  const [runstate, catalog, family] = await Promise.all([
    import("/static/js/runstate.js"),
    import("/static/js/catalog.js"),
    import("/static/js/family.js"),
  ]);
  window.mods = { ...runstate, ...catalog, ...family };
  return Object.keys(window.mods).length;
}"""


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def mods(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Page]:
    state = tmp_path_factory.mktemp("web-modules") / "state"
    async with modules_page(state, MODULES) as page:
        yield page


async def run(page: Page, body: str) -> Any:
    return await page.evaluate(f"async () => {{ const m = window.mods; {body} }}")


async def test_run_projection(mods: Page) -> None:
    cases = await run(
        mods,
        """return [
          {status: "done", hasActiveRun: true}, {status: " Killed ", hasActiveRun: true},
          {status: "cancelled"}, {hasActiveRun: true}, {hasActiveRun: false},
          {status: "running"}, {status: "running", hasActiveRun: false}, {status: "queued"}, {},
        ].map(m.projectRunState)""",
    )
    assert cases == [
        "idle", "idle", "idle", "busy", "idle", "busy", "idle", "unknown", "unknown",
    ]  # fmt: skip


async def test_native_subagent_keys(mods: Page) -> None:
    keys = [
        "agent:main:subagent:x",
        "agent:main:acp:x",
        "agent:main:subagent:a:b",
        "agent::subagent:x",
        "agent:main:subagent:",
        "main",
    ]
    answers = await mods.evaluate(
        "(keys) => keys.map((k) => window.mods.isNativeSubagentKey(k))", keys
    )
    assert answers == [True, False, False, False, False, False]


async def test_attention_and_observed_busy(mods: Page) -> None:
    result = await run(
        mods,
        """
        const store = new Map();
        const storage = {getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v)};
        const a = new m.Attention(storage);
        const out = [];
        a.reconcile("k", "busy", null); out.push(a.get("k"));
        a.reconcile("k", "unknown", null); out.push(a.get("k"));
        out.push(m.isBusy({key: "k"}, a), m.isBusy({key: "k", hasActiveRun: false}, a));
        a.reconcile("k", "idle", null); out.push(a.get("k"));
        a.reconcile("v", "busy", "v"); a.reconcile("v", "idle", "v"); out.push(a.get("v"));
        a.reconcile("n", "idle", null); out.push(a.get("n"));
        a.markRead("k"); out.push(a.get("k"));
        out.push(new m.Attention(storage).get("v"));
        a.remove("v"); out.push(new m.Attention(storage).bySessionKey.has("v"));
        out.push(JSON.parse(store.get("clawline.session-attention")).version);
        return out;""",
    )
    busy = {"observedBusy": True, "unread": False}
    settled = {"observedBusy": False, "unread": True}
    quiet = {"observedBusy": False, "unread": False}
    assert result == [busy, busy, True, False, settled, quiet, quiet, quiet, quiet, False, 1]


async def test_catalog_merge_rules(mods: Page) -> None:
    result = await run(
        mods,
        """
        const c = new m.Catalog();
        c.putRows([{key: "a", label: "A", status: "running", derivedTitle: "t"}], 100);
        const out = [];
        out.push(c.applyChanged({sessionKey: "a", ts: 99, status: "done"}).change);
        out.push(c.get("a").status);
        const snapshot = {key: "a", status: "done", label: null};
        c.applyChanged({sessionKey: "a", ts: 100, session: snapshot});
        out.push([c.get("a").status, c.get("a").label, c.get("a").derivedTitle]);
        out.push(c.applyChanged({sessionKey: "b", ts: 1, status: "running"}).change, c.has("b"));
        out.push(c.applyChanged({sessionKey: "b", ts: 1, session: {key: "b"}}).change, c.has("b"));
        out.push(c.applyChanged({sessionKey: "c", ts: 1, session: {key: "x"}}).change);
        out.push(c.applyChanged({sessionKey: "a", ts: 101, reason: "delete"}).change, c.has("a"));
        out.push(c.applyChanged({sessionKey: "agent:m:cron:j:run:r", session: {}}).change);
        return out;""",
    )
    assert result == [
        "ignored",
        "running",
        ["done", None, "t"],
        "ignored",
        False,
        "updated",
        True,
        "relist",
        "deleted",
        False,
        "ignored",
    ]


async def test_family_loader_rejects_stale_answers(mods: Page) -> None:
    result = await run(
        mods,
        """
        const waiting = [];
        const fetch = (key) => new Promise((resolve) => waiting.push({key, resolve}));
        const loader = new m.FamilyLoader(fetch, () => {});
        const answer = (key) => ({success: true, current: {sessionKey: key}, children: []});
        const out = [];
        loader.select("agent:m:p");
        loader.select("agent:m:q");
        waiting[0].resolve(answer("agent:m:p"));          // stale: selection changed
        await null; await null;
        out.push(loader.familyOf("agent:m:p"), loader.familyOf("agent:m:q"));
        waiting[1].resolve({success: false, current: null, children: [], error: "x"});
        await null; await null;
        out.push(loader.familyOf("agent:m:q"));            // failure: ignored silently
        loader.refresh();
        waiting[2].resolve(answer("agent:m:q"));
        await null; await null;
        out.push(loader.familyOf("agent:m:q").current.sessionKey);
        loader.refresh(); loader.refresh();                  // an older request of the same key
        waiting[3].resolve({success: true, current: null, children: [{sessionKey: "old"}]});
        await null; await null;
        out.push(loader.familyOf("agent:m:q").children.length);
        loader.select("agent:m:p");
        out.push(loader.familyOf("agent:m:q"));            // another key's family is dropped
        return out;""",
    )
    assert result == [None, None, None, "agent:m:q", 0, None]


async def test_spawn_signature(mods: Page) -> None:
    result = await run(
        mods,
        """
        const details = {status: "accepted", runId: " r1 ", childSessionKey: "agent:m:subagent:x"};
        const ok = {toolCallId: "c1", title: "sessions_spawn: research", status: "completed",
                    details};
        const out = [m.spawnIdentity(ok)];
        for (const bad of [
          {...ok, title: "sessions_send"}, {...ok, status: "in_progress"},
          {...ok, details: {...ok.details, status: "forbidden"}},
          {...ok, details: {...ok.details, runId: "  "}},
          {...ok, details: {...ok.details, childSessionKey: ""}}, {...ok, details: null},
        ]) out.push(m.spawnIdentity(bad));
        const w = new m.SpawnWatcher();
        out.push(w.observe("p", [], {live: false}));
        out.push(w.observe("p", [ok], {live: true}));       // new accepted spawn: refetch
        out.push(w.observe("p", [ok], {live: true}));       // unchanged
        out.push(w.observe("q", [ok], {live: true}));       // a switch only records
        out.push(w.observe("q", [], {live: true}));         // empty signature: no refetch
        out.push(w.observe("q", [ok], {live: false}));      // history load: no refetch
        return out;""",
    )
    assert result[0] == "c1\u0000r1\u0000agent:m:subagent:x"
    assert result[1:7] == [None] * 6
    assert result[7:] == [False, True, False, False, False, False]


async def test_children_child_view_and_titles(mods: Page) -> None:
    result = await run(
        mods,
        """
        const c = new m.Catalog();
        c.putRows([{key: "agent:m:p"}, {key: "agent:m:subagent:a"}], 1);
        const fam = {current: {sessionKey: "agent:m:p", parentSessionKey: null},
                     children: [{sessionKey: "agent:m:subagent:b", title: "B"},
                                {sessionKey: "agent:m:subagent:a", title: "[Subagent Context] A"}]};
        const out = [m.visibleChildren(fam, c, (k) => k.endsWith("a"))];
        const child = {current: {sessionKey: "agent:m:subagent:a", parentSessionKey: "agent:m:p"},
                       children: []};
        out.push(m.childView(child, "agent:m:subagent:a", c));
        c.applyChanged({sessionKey: "agent:m:p", ts: 2, reason: "delete"});
        out.push(m.childView(child, "agent:m:subagent:a", c));
        out.push(m.childView(fam, "agent:m:p", c));
        out.push(m.childView(child, "agent:m:subagent:other", c));
        out.push(m.cleanChildTitle("[Subagent Context]   Review", "k"),
                 m.cleanChildTitle("[Subagent Context]", "k"), m.cleanChildTitle(" x", "k"),
                 m.cleanWindowTitle("[Subagent Context] W", "agent:m:subagent:a"),
                 m.cleanWindowTitle("[Subagent Context] W", "agent:m:acp:a"));
        return out;""",
    )
    assert result[0] == [{"sessionKey": "agent:m:subagent:a", "title": "[Subagent Context] A",
                          "busy": True}]  # fmt: skip
    assert result[1] == {"isChild": True, "returnTarget": "agent:m:p"}
    assert result[2] == {"isChild": True, "returnTarget": None}
    assert result[3] == {"isChild": False, "returnTarget": None}
    assert result[4] == {"isChild": False, "returnTarget": None}
    assert result[5:] == ["Review", "k", " x", "W", "[Subagent Context] W"]
