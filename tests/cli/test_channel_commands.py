"""``clawline channels list`` and ``clawline channels outbox`` read the store."""

from __future__ import annotations

import json

from clawline.records.outbox import OutboxItem, OutboxTarget
from clawline.store import open_store
from tests.cli.helpers import Cli

WEBHOOK = '[channels.webhook]\nurl = "http://127.0.0.1:9/hook"\ninboundToken = "t"\n'


def _queue(cli: Cli, *keys: str) -> None:
    store = open_store(None, default_sqlite_path=cli.state_dir / "clawline.db")
    try:
        with store.transaction() as tx:
            tx.outbox.enqueue(
                [
                    OutboxItem(
                        target=OutboxTarget("webhook", "default", "alice"),
                        text=f"text {key}",
                        kind="reply",
                        dedupe_key=key,
                        created_at=1,
                        next_attempt_at=1,
                    )
                    for key in keys
                ]
            )
        with store.transaction() as tx:
            tx.outbox.failed(1, 2, "webhook answered 410 Gone")
    finally:
        store.close()


def test_channels_list_shows_the_configured_channels_and_their_depth(clawline: Cli) -> None:
    clawline.state_dir.mkdir(parents=True)
    (clawline.state_dir / "config.toml").write_text(WEBHOOK, encoding="utf-8")
    _queue(clawline, "a", "b", "c")
    listed = json.loads(clawline.ok("channels", "list", "--format", "json"))["channels"]
    assert listed == [
        {"channel": "webchat", "threads": True, "accountId": "default", "outbox": 0},
        {"channel": "webhook", "threads": False, "accountId": "default", "outbox": 2},
    ]
    table = clawline.ok("channels", "list")
    assert "webhook" in table
    assert "CHANNEL" in table


def test_channels_outbox_lists_newest_first_and_filters(clawline: Cli) -> None:
    clawline.state_dir.mkdir(parents=True)
    _queue(clawline, "a", "b")
    items = json.loads(clawline.ok("channels", "outbox", "--format", "json"))["items"]
    assert [(item["id"], item["status"]) for item in items] == [(2, "pending"), (1, "failed")]
    failed = json.loads(clawline.ok("channels", "outbox", "--status", "failed", "--format", "json"))
    assert [item["lastError"] for item in failed["items"]] == ["webhook answered 410 Gone"]
    table = clawline.ok("channels", "outbox")
    assert "webhook/default/alice" in table
    assert "410 Gone" in table
