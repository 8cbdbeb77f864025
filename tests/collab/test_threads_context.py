"""Where the requester's channel context comes from (``requester_channel_context``)."""

from __future__ import annotations

from typing import Any

import pytest

from clawline.channels import ChannelContext
from clawline.channels.thread_bindings.planner import requester_channel_context
from clawline.config import parse_config
from clawline.records.session import SessionEntry


def _entry(key: str = "agent:main:main", **extra: Any) -> SessionEntry:
    return SessionEntry(
        key=key,
        session_id="s1",
        created_at=1,
        updated_at=1,
        root_session_key=key,
        trace_id="0" * 32,
        lineage_path=(key,),
        extra=extra,
    )


def test_no_entry_no_context() -> None:
    assert requester_channel_context(None) is None


def test_plain_session_is_a_webchat_conversation_named_by_its_key() -> None:
    assert requester_channel_context(_entry("agent:main:dashboard:x")) == ChannelContext(
        "webchat", "default", to="agent:main:dashboard:x"
    )


@pytest.mark.parametrize(
    "key", ["agent:main:cron:nightly", "agent:main:hook:abc", "agent:main:node-1"]
)
def test_cron_hook_and_node_sessions_have_no_context(key: str) -> None:
    assert requester_channel_context(_entry(key)) is None


def test_delivery_context_wins_and_is_completed_from_last_fields_of_the_same_channel() -> None:
    entry = _entry(
        deliveryContext={"channel": "Forum", "accountId": "bot"},
        lastChannel="forum",
        lastTo="room-9",
        lastThreadId=42,
    )
    assert requester_channel_context(entry) == ChannelContext(
        "forum", "bot", to="room-9", thread_id="42"
    )


def test_last_fields_of_another_channel_do_not_leak_into_the_delivery_context() -> None:
    entry = _entry(deliveryContext={"channel": "forum"}, lastChannel="sms", lastTo="+1")
    assert requester_channel_context(entry) == ChannelContext("forum", "default")


def test_last_fields_alone() -> None:
    entry = _entry(lastChannel="sms", lastTo="+15550100", lastAccountId="main-line")
    assert requester_channel_context(entry) == ChannelContext("sms", "main-line", to="+15550100")


def test_channel_field_alone_names_no_conversation() -> None:
    assert requester_channel_context(_entry(channel="forum")) == ChannelContext("forum", "default")


def test_webchat_without_to_uses_the_session_key() -> None:
    entry = _entry(deliveryContext={"channel": "webchat", "accountId": "ui"})
    assert requester_channel_context(entry) == ChannelContext("webchat", "ui", to="agent:main:main")


def test_internal_channel_is_no_context() -> None:
    assert requester_channel_context(_entry(lastChannel="internal", lastTo="x")) is None


def test_default_account_comes_from_the_channel_config() -> None:
    config = parse_config({"channels": {"forum": {"defaultAccount": "bot"}}}).thread_bindings
    entry = _entry(lastChannel="forum", lastTo="room")
    assert requester_channel_context(entry, config) == ChannelContext("forum", "bot", to="room")


def test_blank_and_odd_values_are_ignored() -> None:
    entry = _entry(deliveryContext={"channel": "  ", "to": True}, lastChannel="", channel=None)
    assert requester_channel_context(entry) == ChannelContext(
        "webchat", "default", to="agent:main:main"
    )
