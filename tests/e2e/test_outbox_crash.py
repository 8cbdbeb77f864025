"""Nothing queued is lost when the gateway is killed: a reply waiting in the outbox (its
receiver failing) survives a SIGKILL and is delivered once by the next gateway process; the
receiver, keeping the ``Idempotency-Key``, sees it once even when the killed gateway had sent it.

Real processes (``python -m clawline gateway run``), the webhook channel, a real receiver."""

from __future__ import annotations

from pathlib import Path

import httpx

from clawline.testing.webhook_receiver import WebhookReceiver
from tests.e2e.support import clean_env, gateway_process, opened_store, until

TOKEN = "in-token"


def _config(url: str) -> str:
    return (
        "[agents]\nechoDelayMs = 0\n\n"
        f'[channels.webhook]\nurl = "{url}"\ninboundToken = "{TOKEN}"\n'
    )


async def test_a_pending_reply_survives_a_sigkill_and_is_delivered_once(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    async with WebhookReceiver() as receiver:
        (state / "config.toml").write_text(_config(receiver.url), encoding="utf-8")
        env = clean_env(state)
        receiver.answer_next([503] * 1000)  # the receiver is down
        async with gateway_process(env, tmp_path / "life1.log") as life1:
            async with httpx.AsyncClient() as http:
                answer = await http.post(
                    "http" + life1.url[2:] + "/channels/webhook",
                    json={"to": "ivy", "from": "ivy", "text": "reply: survive", "messageId": "c1"},
                    headers={"Authorization": f"Bearer {TOKEN}"},
                )
            assert answer.status_code == 202, answer.text

            async def tried_twice() -> bool:
                return len(receiver.posts) >= 2

            await until(tried_twice, timeout=20, what="two failed attempts")
            assert await life1.kill() == -9
        with opened_store(state) as store:
            [row] = store.outbox.page(None, None, 10)
            assert (row.status, row.text) == ("pending", "survive")
            assert row.attempts >= 1
        receiver.answer_normally()  # the receiver is back
        async with gateway_process(env, tmp_path / "life2.log") as life2:

            async def delivered() -> bool:
                return len(receiver.delivered) == 1

            await until(delivered, timeout=30, what="the reply delivered after the restart")
            assert await life2.terminate() == 0
        with opened_store(state) as store:
            [row] = store.outbox.page(None, None, 10)
            assert row.status == "delivered"
    assert [post.body["text"] for post in receiver.delivered] == ["survive"]
    keys = {post.headers["idempotency-key"] for post in receiver.posts}
    assert keys == {f"clawline-outbox-{row.id}"}  # every attempt, in both lives, one key
