"""The page over HTTP (no browser): served from the package with a strict CSP, vendored
assets only (nothing fetched from elsewhere, no inline code), and no path out of the static
directory."""

from __future__ import annotations

import asyncio
import re
import urllib.error
import urllib.request
from email.message import Message

import pytest

from clawline.testing.live_gateway import RunningGateway
from clawline.web import STATIC_DIR
from clawline.web.http import CONTENT_SECURITY_POLICY

SVG_NAMESPACE = "http://www.w3.org/2000/svg"


def get(url: str) -> tuple[int, Message, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def test_the_policy_allows_only_this_origin() -> None:
    directives = dict(
        ([*part.split(" ", 1), ""])[:2] for part in CONTENT_SECURITY_POLICY.split("; ")
    )
    assert directives["default-src"] == "'none'"
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"
    assert directives["connect-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"
    assert "unsafe" not in CONTENT_SECURITY_POLICY


async def test_the_page_is_served_with_security_headers(web_gateway: RunningGateway) -> None:
    status, headers, body = await asyncio.to_thread(get, web_gateway.http_url + "/")
    assert status == 200
    assert headers["content-type"].startswith("text/html")
    assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    assert body == (STATIC_DIR / "index.html").read_bytes()


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/static/js/main.js", "text/javascript"),
        ("/static/css/app.css", "text/css"),
        ("/static/i18n/zh.json", "application/json"),
    ],
)
async def test_assets_are_served(web_gateway: RunningGateway, path: str, content_type: str) -> None:
    status, headers, body = await asyncio.to_thread(get, web_gateway.http_url + path)
    assert status == 200
    assert headers["content-type"].startswith(content_type)
    assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert headers["cache-control"] == "no-cache"
    assert body == (STATIC_DIR / path.removeprefix("/static/")).read_bytes()


@pytest.mark.parametrize(
    "path", ["/static/nope.js", "/static/../__init__.py", "/static/%2e%2e/family.py"]
)
async def test_nothing_outside_the_static_directory(web_gateway: RunningGateway, path: str) -> None:
    status, _, _ = await asyncio.to_thread(get, web_gateway.http_url + path)
    assert status == 404


def test_assets_are_vendored_and_inline_free() -> None:
    files = [p for p in STATIC_DIR.rglob("*") if p.is_file()]
    assert {p.suffix for p in files} == {".html", ".js", ".css", ".json"}
    for path in files:
        text = path.read_text("utf-8").replace(SVG_NAMESPACE, "")
        assert not re.search(r"\b(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", text), path
        assert "@import" not in text, path
        assert "url(" not in text, path
    html = (STATIC_DIR / "index.html").read_text("utf-8")
    assert re.findall(r"<script\b[^>]*>", html) == [
        '<script type="module" src="/static/js/main.js">'
    ]
    assert "<style" not in html
    assert " style=" not in html
    assert " on" not in html.lower()
    for path in (STATIC_DIR / "js").glob("*.js"):
        source = path.read_text("utf-8")
        assert "innerHTML" not in source, path
        assert "eval(" not in source, path
