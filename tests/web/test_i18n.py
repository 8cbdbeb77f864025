"""Locale parity (no browser): every locale has exactly the same keys and placeholders, the
strings ClawX defines are exact in English and Chinese, and every key the page's
modules use exists."""

# ruff: noqa: RUF001  (the Chinese strings use full-width punctuation on purpose)
from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from clawline.web import LOCALES, STATIC_DIR

SECTION_13 = {
    "count": ("Dispatched {{count}} subagents", "已派出 {{count}} 个子智能体"),
    "expand": ("Expand subagent sessions", "展开子智能体会话"),
    "collapse": ("Collapse subagent sessions", "折叠子智能体会话"),
    "toggle": ("{{action}}, {{count}}", "{{action}}，{{count}}"),
    "panel": ("Subagent sessions", "子智能体会话"),
    "open": ("Open subagent {{title}}", "打开子智能体 {{title}}"),
    "marker": ("Subagent", "子智能体"),
    "returnToParent": ("Return to parent conversation", "返回父会话"),
    "busy": ("Running", "运行中"),
    "settled": ("Settled", "已结束"),
    "aggregateStatus": ("Subagents: {{status}}", "子智能体：{{status}}"),
    "rowStatus": ("{{title}}: {{status}}", "{{title}}：{{status}}"),
}
RELATED = {
    "chat:composer.thinking": ("Thinking…", None),
    "chat:composer.subagentsWorking": ("Subagents working…", None),
    "chat:acp.toolName.spawnSubagent": ("Spawn subagent", "派出子智能体"),
    "chat:sessionList.subagent": ("Subagent", "子 Agent"),
}
PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
PLURAL_FORMS = {"en": {"one"}, "zh": set(), "ja": set(), "ru": {"one", "few", "many"}}
"""The CLDR plural categories (Intl.PluralRules) of each locale's integers besides ``other``: a
plural key ``k`` is ``k`` (the ``other`` form) plus ``k_<category>`` for each of them."""
PLURAL_SUFFIX = re.compile(r"_(zero|one|two|few|many|other)$")


def load(locale: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((STATIC_DIR / "i18n" / f"{locale}.json").read_text("utf-8"))
    return data


def flatten(tree: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    """``("namespace:dotted.path", value)`` for every string; the first level is the namespace."""
    for name, value in tree.items():
        key = f"{name}:" if not prefix else f"{prefix}{'' if prefix.endswith(':') else '.'}{name}"
        if isinstance(value, Mapping):
            yield from flatten(value, key)
        else:
            assert isinstance(value, str), f"{key} must be a string"
            assert value.strip(), f"{key} must not be blank"
            yield key, value


def strings(locale: str) -> dict[str, str]:
    return dict(flatten(load(locale)))


def base_key(key: str) -> str:
    """``chat:x.count_few`` → ``chat:x.count``; other keys unchanged."""
    return PLURAL_SUFFIX.sub("", key)


def plural_forms(found: dict[str, str]) -> dict[str, set[str]]:
    """base key → the plural categories it has forms for (keys without any are left out)."""
    forms: dict[str, set[str]] = {}
    for key in found:
        if match := PLURAL_SUFFIX.search(key):
            forms.setdefault(base_key(key), set()).add(match.group(1))
    return forms


def plural_problems(locale: str, found: dict[str, str]) -> list[str]:
    """What is wrong with a locale's plural forms: every plural key (one with a form in any
    locale) has exactly this locale's categories, and a form never comes without its key."""
    forms = plural_forms(found)
    plural_keys = {base for loc in LOCALES for base in plural_forms(strings(loc))} | set(forms)
    problems = [f"{base}_* without {base}" for base in forms if base not in found]
    for base in sorted(plural_keys):
        have, want = forms.get(base, set()), PLURAL_FORMS[locale]
        if have != want:
            problems.append(f"{base}: {sorted(have)} instead of {sorted(want)}")
    return problems


@pytest.mark.parametrize("locale", [loc for loc in LOCALES if loc != "en"])
def test_every_locale_has_the_same_keys(locale: str) -> None:
    english = {base_key(key) for key in strings("en")}
    other = {base_key(key) for key in strings(locale)}
    assert sorted(english - other) == [], f"missing in {locale}"
    assert sorted(other - english) == [], f"only in {locale}"


@pytest.mark.parametrize("locale", LOCALES)
def test_plural_forms_follow_the_language(locale: str) -> None:
    assert plural_problems(locale, strings(locale)) == []


@pytest.mark.parametrize("locale", LOCALES)
def test_placeholders_match_english(locale: str) -> None:
    """A key has English's placeholders; a plural form may leave ``{{count}}`` out (English
    "one" is only ever 1) but adds none."""
    english, other = strings("en"), strings(locale)
    for key, text in other.items():
        found, expected = (
            set(PLACEHOLDER.findall(text)),
            set(PLACEHOLDER.findall(english[base_key(key)])),
        )
        if key == base_key(key):
            assert sorted(found) == sorted(expected), key
        else:
            assert found <= expected, key


def test_section_13_strings_are_exact() -> None:
    english, chinese = strings("en"), strings("zh")
    for name, (en, zh) in SECTION_13.items():
        key = f"chat:acp.subagentSessions.{name}"
        assert english[key] == en
        assert chinese[key] == zh
    for key, (en, maybe_zh) in RELATED.items():
        assert english[key] == en
        if maybe_zh is not None:
            assert chinese[key] == maybe_zh


def used_keys() -> Iterator[tuple[str, str]]:
    """``(file, key)`` of every ``"ns:key"`` string in the modules (``t("…")``, ternaries), a
    template key's fixed prefix (`` `chat:tool.${status}` `` → ``chat:tool.*``) and
    ``${NS}.name`` with a module's ``const NS``."""
    namespaces = "|".join(load("en"))
    for path in sorted((STATIC_DIR / "js").glob("*.js")):
        source = path.read_text("utf-8")
        namespace = re.search(r'const NS = "([a-z]+:[\w.]+)"', source)
        for key in re.findall(rf'"((?:{namespaces}):[\w.]+)"', source):
            if namespace is None or key != namespace.group(1):
                yield path.name, key
        for prefix in re.findall(rf"`((?:{namespaces}):[\w.]*?)\.?\$\{{", source):
            yield path.name, prefix + ".*"
        if namespace:
            for name in re.findall(r"\$\{NS\}\.(\w+)", source):
                yield path.name, f"{namespace.group(1)}.{name}"


def test_every_used_key_exists() -> None:
    english = strings("en")
    found = list(used_keys())
    assert len(found) > 50
    for where, key in found:
        if key.endswith(".*"):
            assert any(k.startswith(key[:-1]) for k in english), f"{where}: {key}"
        else:
            assert key in english, f"{where}: {key}"


def test_a_missing_key_is_caught() -> None:
    """The parity check itself fails when a locale lacks a key."""
    broken = strings("ja")
    broken.pop("chat:acp.subagentSessions.count")
    english = {base_key(key) for key in strings("en")}
    assert english - {base_key(key) for key in broken} == {"chat:acp.subagentSessions.count"}


def test_a_missing_plural_form_is_caught() -> None:
    """The plural check fails when Russian lacks its "few" form or Chinese gets a "one" form."""
    russian = strings("ru")
    russian.pop("chat:acp.subagentSessions.count_few")
    assert plural_problems("ru", russian) == [
        "chat:acp.subagentSessions.count: ['many', 'one'] instead of ['few', 'many', 'one']"
    ]
    chinese = strings("zh") | {"chat:sessionList.untitled_one": "新对话"}
    assert plural_problems("zh", chinese) == ["chat:sessionList.untitled: ['one'] instead of []"]
