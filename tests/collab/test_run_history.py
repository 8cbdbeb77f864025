"""What a run reads back of its transcript: a new session's first run starts from its own
message, and a later read sees what the run appended since."""

from __future__ import annotations

from clawline.agents.messages import text_of
from clawline.agents.runner import RunContext
from clawline.runtime import Runtime
from tests.collab.support import runner_of

FRESH = "agent:main:fresh"


async def test_a_first_runs_history_is_its_message_then_what_it_appended(
    services: Runtime,
) -> None:
    seen: list[list[str]] = []

    async def reply(ctx: RunContext) -> str:
        seen.append([text_of(message) for message in await ctx.history(10)])
        await ctx.append_message({"role": "assistant", "content": [{"type": "text", "text": "a"}]})
        seen.append([text_of(message) for message in await ctx.history(10)])
        return "done"

    runner_of(services).script(FRESH, reply)
    ack = await services.runs.send(session_key=FRESH, message="hello", idempotency_key="h1")
    outcome = await ack.done
    assert outcome.status == "done"
    assert seen == [["hello"], ["hello", "a"]]


async def test_a_later_run_reads_the_whole_transcript(services: Runtime) -> None:
    seen: list[list[str]] = []

    async def reply(ctx: RunContext) -> str:
        seen.append([text_of(message) for message in await ctx.history(10)])
        return "second answer"

    runner_of(services).script(FRESH, "first answer", reply)
    first = await services.runs.send(session_key=FRESH, message="one", idempotency_key="a")
    await first.done
    second = await services.runs.send(session_key=FRESH, message="two", idempotency_key="b")
    await second.done
    assert seen == [["one", "first answer", "two"]]
