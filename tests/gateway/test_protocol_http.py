"""HTTP on the gateway's port: health probes, readiness, and the web page at ``/``."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import pytest
import websockets

from clawline.testing.live_gateway import RunningGateway


def get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.headers["content-type"], response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["content-type"], error.read()


@pytest.mark.parametrize("path", ["/health", "/healthz", "/readyz"])
async def test_probes_answer_live_json(gw: RunningGateway, path: str) -> None:
    status, content_type, body = await asyncio.to_thread(get, gw.http_url + path)
    assert status == 200
    assert content_type == "application/json"
    assert json.loads(body) == {"ok": True, "status": "live"}


async def test_readyz_is_503_while_the_gateway_is_not_ready(gw: RunningGateway) -> None:
    gw.gateway.ready = False
    try:
        status, content_type, body = await asyncio.to_thread(get, gw.http_url + "/readyz")
        assert status == 503
        assert content_type == "application/json"
        assert json.loads(body) == {"ok": False, "status": "starting"}
        # liveness does not depend on readiness
        assert (await asyncio.to_thread(get, gw.http_url + "/healthz"))[0] == 200
    finally:
        gw.gateway.ready = True
    assert (await asyncio.to_thread(get, gw.http_url + "/readyz"))[0] == 200


async def test_the_gateway_is_ready_once_serving(gw: RunningGateway) -> None:
    assert gw.gateway.ready is True


async def test_root_serves_html(gw: RunningGateway) -> None:
    status, content_type, body = await asyncio.to_thread(get, gw.http_url + "/")
    assert status == 200
    assert content_type.startswith("text/html")
    assert body.lstrip().lower().startswith(b"<!doctype html>")


async def test_unknown_paths_are_404(gw: RunningGateway) -> None:
    status, _, _ = await asyncio.to_thread(get, gw.http_url + "/nope")
    assert status == 404


async def test_a_websocket_upgrade_elsewhere_is_refused(gw: RunningGateway) -> None:
    with pytest.raises(websockets.InvalidStatus) as caught:
        await websockets.connect(gw.url + "/other")
    assert caught.value.response.status_code in (403, 404)


async def test_the_gateway_answers_only_on_loopback(gw: RunningGateway) -> None:
    assert gw.url.startswith("ws://127.0.0.1:")
    assert gw.port > 0
