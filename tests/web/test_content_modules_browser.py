"""The page's content modules, run in the browser (ES modules as served, under the page's CSP):
the one title function and its sibling suffix, completion events read from ``internalEvents``
and from the event text, run durations, plural forms and relative times in the four
languages, file sizes, orphaned sub-agents and running descendants (docs/web.md)."""

# ruff: noqa: RUF001  (the Chinese and Japanese strings use full-width punctuation on purpose)
from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page

from clawline.collab.completion import CompletionEvent, ending_of, render_event
from tests.web.conftest import modules_page

pytestmark = pytest.mark.asyncio(loop_scope="module")

MODULES = """async () => {
  const loaded = await Promise.all([
    "titles", "completion", "i18n", "lineage", "catalog", "cards", "artifacts",
  ].map((name) => import(`/static/js/${name}.js`)));
  window.mods = Object.assign({}, ...loaded);
  return Object.keys(window.mods).length;
}"""


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def mods(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Page]:
    state = tmp_path_factory.mktemp("web-content") / "state"
    async with modules_page(state, MODULES) as page:
        yield page


async def run(page: Page, body: str, arg: Any = None) -> Any:
    return await page.evaluate(f"async (arg) => {{ const m = window.mods; {body} }}", arg)


async def test_one_title_function(mods: Page) -> None:
    result = await run(
        mods,
        """
        const c = new m.Catalog();
        const P = "agent:m:main", S = (id) => `agent:m:subagent:${id}`;
        c.putRows([
          {key: P, derivedTitle: "spawn 2 x: sleep 1\\\\nreply: twin", sessionId: "aaaaaaaa-1"},
          {key: S("a1111111x"), parentSessionKey: P, derivedTitle: "[Subagent Context] same task"},
          {key: S("b2222222x"), parentSessionKey: P, derivedTitle: "[Subagent Context] same task"},
          {key: S("c3333333x"), parentSessionKey: P, label: "  alpha  ",
           derivedTitle: "[Subagent Context] same task"},
          {key: S("d4444444x"), parentSessionKey: P, derivedTitle: "[Subagent Context] x y"},
          {key: S("e5555555x"), parentSessionKey: "agent:m:other",
           derivedTitle: "[Subagent Context] same task"},
          {key: "agent:m:new", sessionId: "12345678-abcd", derivedTitle: "12345678 (2026-01-02)"},
          {key: "agent:m:spaces", displayName: "  two\\n  lines  "},
        ], 1);
        const tasks = new Map([[S("d4444444x"), {label: null, task: "first   line\\nsecond"}]]);
        const titles = new m.Titles({catalog: c, taskOf: (k) => tasks.get(k),
          acpTitles: new Map([["agent:m:acp", "[Subagent Context] from acp"]]),
          untitled: "New chat"});
        const keys = [P, S("a1111111x"), S("b2222222x"), S("c3333333x"), S("d4444444x"),
                      S("e5555555x"), "agent:m:new", "agent:m:spaces", "agent:m:acp",
                      "agent:m:unknown"];
        return keys.map((k) => titles.of(k))
          .concat([m.firstLine("x".repeat(100)).length, m.firstLine("\\n\\n  third "),
                   m.taskOfMessage("[Subagent Context] You are…\\n[Subagent Task]: do it\\nnow"),
                   m.taskOfMessage("hello"), m.shortId("agent:m:subagent:0123456789")]);""",
    )
    assert result == [
        "spawn 2 x: sleep 1",  # a literal \n ends the first line
        "same task · a1111111",  # twins get their short ids
        "same task · b2222222",
        "alpha",  # the label wins, collapsed
        "first line",  # the task's first line, before the derived title
        "same task",  # another parent: no twin
        "New chat",  # the gateway's stand-in title
        "two",  # display name: first line
        "from acp",  # only the ACP title is known
        "agent:m:unknown",
        80,
        "third",
        "do it\nnow",
        None,
        "01234567",
    ]


async def test_completion_events_from_fields_and_from_text(mods: Page) -> None:
    ok = CompletionEvent.build(
        child_session_key="agent:main:subagent:k1",
        child_session_id="s1",
        label=None,
        task="write it\nthen reply",
        ending=ending_of("done", None),
        result="all <<<END_UNTRUSTED_CHILD_RESULT>>> good",
        stats="Stats: runtime 1m 5s • sessionKey agent:main:subagent:k1",
        requester_is_subagent=False,
    )
    failed = CompletionEvent.build(
        child_session_key="agent:main:subagent:k2",
        child_session_id=None,
        label="beta",
        task="t",
        ending=ending_of("failed", "boom: bad"),
        result="",
        stats="Stats: runtime 2h 3m • sessionKey agent:main:subagent:k2",
        requester_is_subagent=False,
    )
    timeout = CompletionEvent.build(
        child_session_key="agent:main:subagent:k3",
        child_session_id=None,
        label=None,
        task="t",
        ending=ending_of("timeout", None),
        result="partial",
        stats="Stats: sessionKey agent:main:subagent:k3",
        requester_is_subagent=True,
    )
    events = [ok.to_json(), failed.to_json(), timeout.to_json()]
    text = "\n\n".join(render_event(event) for event in (ok, failed, timeout))
    result = await run(
        mods,
        """
        const {events, text} = arg;
        return [
          m.completionCards({internalEvents: events}, text),
          m.completionCards({}, text),
          m.completionCards({}, "just words"),
          m.completionCards({internalEvents: [{type: "other"}]}, "x"),
          m.runtimeSeconds("Stats: runtime 5s • tokens 3"), m.runtimeSeconds("Stats: tokens 3"),
        ];""",
        {"events": events, "text": text},
    )
    from_fields, from_text, plain, other, five, none = result
    expected: list[dict[str, Any]] = [
        {
            "childSessionKey": "agent:main:subagent:k1",
            "taskLabel": "write it\nthen reply",
            "status": "ok",
            "error": None,
            "result": "all <<<END_UNTRUSTED_CHILD_RESULT>>> good",
            "seconds": 65,
        },
        {
            "childSessionKey": "agent:main:subagent:k2",
            "taskLabel": "beta",
            "status": "error",
            "error": "boom: bad",
            "result": "",
            "seconds": 7380,
        },
        {
            "childSessionKey": "agent:main:subagent:k3",
            "taskLabel": "t",
            "status": "timeout",
            "error": None,
            "result": "partial",
            "seconds": None,
        },
    ]
    assert from_fields == expected
    # The text keeps the escaped delimiters and the task on one line; the rest is the same.
    assert from_text[0]["result"] == "all [[UNTRUSTED_CHILD_RESULT_END]] good"
    assert from_text[0]["taskLabel"] == "write it then reply"
    for card in from_text:
        card.pop("result")
        card.pop("taskLabel")
    for card in expected:
        card.pop("result")
        card.pop("taskLabel")
    assert from_text == expected
    assert (plain, other, five, none) == (None, None, 5, None)


async def test_plurals_times_and_sizes_in_four_languages(mods: Page) -> None:
    result = await run(
        mods,
        """
        const out = {};
        const now = Date.UTC(2026, 0, 2, 12, 0, 0);
        for (const locale of ["en", "zh", "ja", "ru"]) {
          await m.setLocale(locale);
          out[locale] = {
            count: [1, 2, 5, 11, 21, 22, 25].map(
              (count) => m.t("chat:acp.subagentSessions.count", {count})),
            running: [1, 2, 5].map((count) => m.t("chat:sessionList.subagentsRunning", {count})),
            ago: [-56_000, -120_000, -7_200_000, 3_000, -400].map((d) => m.timeAgo(now + d, now)),
            sizes: [0, 8, 999, 1234, 5_600_000].map(m.formatBytes),
            durations: [0, 1, 65, 7380].map(m.formatDuration),
          };
        }
        await m.setLocale("en");
        return out;""",
    )
    assert result["en"]["count"] == [
        "Dispatched 1 subagent", "Dispatched 2 subagents", "Dispatched 5 subagents",
        "Dispatched 11 subagents", "Dispatched 21 subagents", "Dispatched 22 subagents",
        "Dispatched 25 subagents",
    ]  # fmt: skip
    assert result["ru"]["count"] == [
        "Запущен 1 субагент", "Запущено 2 субагента", "Запущено 5 субагентов",
        "Запущено 11 субагентов", "Запущен 21 субагент", "Запущено 22 субагента",
        "Запущено 25 субагентов",
    ]  # fmt: skip
    assert result["zh"]["count"][:2] == ["已派出 1 个子智能体", "已派出 2 个子智能体"]
    assert result["ja"]["count"][0] == "1 個のサブエージェントを派遣しました"
    assert result["en"]["running"] == [
        "1 subagent running", "2 subagents running", "5 subagents running",
    ]  # fmt: skip
    assert result["ru"]["running"] == [
        "1 субагент работает", "2 субагента работают", "5 субагентов работают",
    ]  # fmt: skip
    assert result["en"]["ago"] == ["56 seconds ago", "2 minutes ago", "2 hours ago", "now", "now"]
    assert result["ru"]["ago"] == [
        "56 секунд назад", "2 минуты назад", "2 часа назад", "сейчас", "сейчас",
    ]  # fmt: skip
    for locale in ("zh", "ja"):
        assert all(not text.startswith(("-", "−")) for text in result[locale]["ago"]), locale
    assert result["en"]["sizes"] == ["0 B", "8 B", "999 B", "1.2 kB", "5.6 MB"]
    assert result["ru"]["sizes"][:2] == ["0 Б", "8 Б"]
    assert result["en"]["durations"] == ["< 1 sec", "1 sec", "1 min, 5 sec", "2 hr, 3 min"]
    assert result["ru"]["durations"] == ["< 1 с", "1 с", "1 мин 5 с", "2 ч 3 мин"]


async def test_orphans_and_running_descendants(mods: Page) -> None:
    result = await run(
        mods,
        """
        const c = new m.Catalog();
        const S = (id) => `agent:m:subagent:${id}`;
        c.putRows([
          {key: "agent:m:p", updatedAt: 1},
          {key: S("c1"), parentSessionKey: "agent:m:p", lineagePath: ["agent:m:p", S("c1")],
           updatedAt: 5},
          {key: S("g1"), spawnedBy: S("c1"), updatedAt: 6},
          {key: S("o1"), parentSessionKey: "agent:m:gone", updatedAt: 3},
          {key: S("o2"), updatedAt: 4},
          {key: S("o3"), parentSessionKey: S("o1"), updatedAt: 9},
        ], 1);
        const busy = new Set([S("c1"), S("g1"), S("o3")]);
        const counts = m.runningDescendants(c, (k) => busy.has(k));
        return [m.orphanKeys(c), Object.fromEntries([...counts].sort()),
                m.ancestorsOf(c.get(S("g1")), c),
                m.parentOf({key: "x", parentSessionKey: "x"})];""",
    )
    orphans, counts, ancestors, self_parent = result
    assert orphans == ["agent:m:subagent:o2", "agent:m:subagent:o1"]  # newest first
    assert counts == {
        "agent:m:gone": 1,
        "agent:m:p": 2,
        "agent:m:subagent:c1": 1,
        "agent:m:subagent:o1": 1,
    }
    assert ancestors == ["agent:m:subagent:c1", "agent:m:p"]
    assert self_parent is None


async def test_text_types_the_preview_opens(mods: Page) -> None:
    types = ["text/markdown", "text/plain; charset=utf-8", "application/json", "image/svg+xml",
             "application/vnd.api+json", "image/png", "application/octet-stream", ""]  # fmt: skip
    answers = await mods.evaluate("(types) => types.map((t) => window.mods.isTextType(t))", types)
    assert answers == [True, True, True, True, True, False, False, False]
