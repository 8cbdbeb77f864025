"""One exception tree: every exception class of the package sits under exactly one category
(``clawline.errors.CATEGORIES``), except the errors that carry a protocol code, whose category
is their code's; the table maps every category to a gateway code."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import click
import pytest

import clawline
from clawline import errors
from clawline.client.client_errors import ClientError, GatewayRequestError
from clawline.errors import CATEGORIES, CATEGORY_CODES, CODE_CATEGORIES, ClawlineError
from clawline.gateway.frames import ErrorCode, GatewayError
from clawline.plugins.methods import MethodError

CODE_CARRIERS = (GatewayError, MethodError, ClientError)
"""Errors that carry a protocol answer: their category is their code's."""
CLI_EXITS = (click.ClickException,)
"""How a command leaves with its message and exit code: click's own tree, not an error."""


def exception_classes() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for module in pkgutil.walk_packages(clawline.__path__, "clawline."):
        loaded = importlib.import_module(module.name)
        for value in vars(loaded).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == loaded.__name__
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


CLASSES = exception_classes()


def test_the_walk_finds_the_tree() -> None:
    assert len(CLASSES) > 50
    assert errors.LabelInUse in CLASSES


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_every_exception_has_exactly_one_category(cls: type[BaseException]) -> None:
    if issubclass(cls, CLI_EXITS):
        return
    assert issubclass(cls, ClawlineError), f"{cls.__qualname__} is not a ClawlineError"
    if cls is ClawlineError or cls in CATEGORIES:
        return
    ancestors = [category for category in CATEGORIES if issubclass(cls, category)]
    if issubclass(cls, CODE_CARRIERS):
        assert ancestors == [], f"{cls.__qualname__} carries a code and a category"
    else:
        assert len(ancestors) == 1, f"{cls.__qualname__}: categories {ancestors}"


def test_every_category_has_a_gateway_code_and_every_code_a_category() -> None:
    assert set(CATEGORY_CODES) == set(CATEGORIES)
    assert set(CATEGORY_CODES.values()) <= {code.value for code in ErrorCode}
    assert {code.value for code in ErrorCode} <= set(CODE_CATEGORIES)


def test_a_code_carrier_takes_the_category_of_its_code() -> None:
    assert GatewayError("x", ErrorCode.CONFLICT).category is errors.Conflict
    assert GatewayError("x").category is errors.InvalidInput
    assert MethodError("x", "UNAVAILABLE").category is errors.Unavailable
    assert GatewayRequestError("NOT_A_CODE", "x").category is errors.Internal
    assert GatewayRequestError("TIMEOUT", "x").category is errors.Unavailable
    assert errors.LabelInUse("x").category is errors.Conflict
    assert errors.StoreTimeout("x").category is errors.Unavailable
    assert errors.MigrationError("x").category is errors.Internal
