"""A raw protocol client for tests: frames in and out, nothing hidden."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Sequence
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection

from clawline.gateway.device import DeviceIdentity, v3_payload

__all__ = ["WireClient", "connect_params"]

_ids = itertools.count(1)


def connect_params(
    *,
    token: str | None = None,
    scopes: Sequence[str] = ("operator.admin",),
    min_protocol: int = 3,
    max_protocol: int = 4,
    client_id: str = "test",
    mode: str = "test",
    platform: str = "linux",
    device_family: str | None = None,
    device: DeviceIdentity | None = None,
    nonce: str | None = None,
    signed_at: int = 1_796_000_000_000,
) -> dict[str, Any]:
    client: dict[str, Any] = {
        "id": client_id,
        "version": "0.0.1",
        "platform": platform,
        "mode": mode,
    }
    if device_family is not None:
        client["deviceFamily"] = device_family
    params: dict[str, Any] = {
        "minProtocol": min_protocol,
        "maxProtocol": max_protocol,
        "client": client,
        "role": "operator",
        "scopes": list(scopes),
        "caps": [],
    }
    if token is not None:
        params["auth"] = {"token": token}
    if device is not None:
        assert nonce is not None, "a device block signs the challenge nonce"
        payload = v3_payload(
            device_id=device.device_id,
            client_id=client_id,
            client_mode=mode,
            role="operator",
            scopes=list(scopes),
            signed_at=signed_at,
            token=token,
            nonce=nonce,
            platform=platform,
            device_family=device_family,
        )
        params["device"] = {
            "id": device.device_id,
            "publicKey": device.public_key,
            "signature": device.sign(payload),
            "signedAt": signed_at,
            "nonce": nonce,
        }
    return params


class WireClient:
    """One WebSocket connection. Responses are matched by id; events are collected in order."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.events: list[dict[str, Any]] = []
        self._responses: dict[str, asyncio.Queue[dict[str, Any]]] = {}
        self._event_signal = asyncio.Event()
        self._reader = asyncio.create_task(self._read())
        self.challenge: dict[str, Any] = {}
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    @classmethod
    async def open(cls, url: str, path: str = "/ws") -> WireClient:
        ws = await websockets.connect(url + path, max_size=64 * 1024 * 1024)
        client = cls(ws)
        client.challenge = await client.next_event("connect.challenge")
        return client

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                frame = json.loads(raw)
                if frame.get("type") == "res":
                    key = frame.get("id") or ""
                    self._responses.setdefault(key, asyncio.Queue()).put_nowait(frame)
                else:
                    self.events.append(frame)
                    self._event_signal.set()
        except websockets.ConnectionClosed:
            pass
        finally:
            if not self.closed.done():
                self.closed.set_result(None)
            self._event_signal.set()

    async def send(self, frame: dict[str, Any] | str) -> None:
        await self.ws.send(frame if isinstance(frame, str) else json.dumps(frame))

    async def response(self, request_id: str | None, timeout: float = 5.0) -> dict[str, Any]:
        queue = self._responses.setdefault(request_id or "", asyncio.Queue())
        return await asyncio.wait_for(queue.get(), timeout)

    async def call(
        self, method: str, params: Any = None, *, timeout: float = 5.0
    ) -> dict[str, Any]:
        """Send a request and return its (first) response frame."""
        request_id = f"r{next(_ids)}"
        frame: dict[str, Any] = {"type": "req", "id": request_id, "method": method}
        if params is not None:
            frame["params"] = params
        await self.send(frame)
        return await self.response(request_id, timeout)

    async def ok(self, method: str, params: Any = None, *, timeout: float = 5.0) -> Any:
        """Call and return the payload; fail the test on an error response."""
        frame = await self.call(method, params, timeout=timeout)
        assert frame["ok"] is True, frame
        return frame.get("payload")

    async def connect(self, **kwargs: Any) -> dict[str, Any]:
        """Complete the handshake; return the connect response frame."""
        if "device" in kwargs and "nonce" not in kwargs:
            kwargs["nonce"] = self.challenge["payload"]["nonce"]
        return await self.call("connect", connect_params(**kwargs))

    async def next_event(
        self, name: str | None = None, *, timeout: float = 5.0, after: int = 0
    ) -> dict[str, Any]:
        """The first collected event (with index >= ``after``) named ``name``."""

        async def wait() -> dict[str, Any]:
            while True:
                for frame in self.events[after:]:
                    if name is None or frame.get("event") == name:
                        return frame
                if self.closed.done():
                    raise ConnectionError("connection closed while waiting for an event")
                self._event_signal.clear()
                await self._event_signal.wait()

        return await asyncio.wait_for(wait(), timeout)

    def events_named(self, name: str) -> list[dict[str, Any]]:
        return [frame for frame in self.events if frame.get("event") == name]

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()
        await asyncio.gather(self._reader, return_exceptions=True)
