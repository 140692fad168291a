"""Provider-safe tool aliases: valid for every provider, exact on the way back, never fuzzy."""

from __future__ import annotations

import pytest

from workers.control_tools import CONTROL_TOOL_NAMES
from workers.errors import ConfigError
from workers.tool_names import (
    MODEL_NAME,
    ToolNameCollisionError,
    alias_map,
    check_aliases,
    from_model_name,
    to_model_name,
)

OFFERED = ["orders.find_order", "orders.refund_status", *sorted(CONTROL_TOOL_NAMES)]


def test_dot_becomes_double_underscore() -> None:
    assert to_model_name("orders.find_order") == "orders__find_order"
    assert to_model_name("kb.search_kb") == "kb__search_kb"
    assert to_model_name("mcp-time.get_current_time") == "mcp-time__get_current_time"


def test_control_tools_are_their_own_alias() -> None:
    for name in CONTROL_TOOL_NAMES:
        assert to_model_name(name) == name


@pytest.mark.parametrize(
    "name",
    [
        "orders.find_order",
        "a.b",
        "s" * 40 + "." + "t" * 40,  # too long once joined
        "sérver.tool",  # not ASCII
        "orders.find order",  # a space
        "x.y.z",  # two dots
    ],
)
def test_alias_is_always_provider_safe(name: str) -> None:
    alias = to_model_name(name)
    assert MODEL_NAME.match(alias), alias
    assert "." not in alias
    assert to_model_name(name) == alias  # deterministic


def test_long_names_stay_distinct() -> None:
    a = "s" * 40 + "." + "t" * 40
    b = "s" * 40 + "." + "t" * 39 + "u"
    assert to_model_name(a) != to_model_name(b)
    assert len(to_model_name(a)) == 64
    check_aliases([a, b])


def test_empty_name_is_refused() -> None:
    with pytest.raises(ValueError):
        to_model_name("")


def test_from_model_name_is_the_exact_inverse() -> None:
    for name in OFFERED:
        assert from_model_name(to_model_name(name), OFFERED) == name
    mapping = alias_map(OFFERED)
    assert mapping["orders__find_order"] == "orders.find_order"
    assert mapping["ask_clarification"] == "ask_clarification"
    assert len(mapping) == len(OFFERED)


@pytest.mark.parametrize(
    "called",
    [
        "orders__issue_refund",  # a real tool, but not offered
        "kb__search_kb",  # another worker's tool
        "orders.find_order",  # the dotted name is not an alias: the hub decides on it
        "Orders__find_order",  # no case folding
        "orders__find_order ",  # no trimming
        " orders__find_order",
        "orders_find_order",  # no near misses
        "orders___find_order",
        "orders__find_orde",  # no prefixes
        "orders__",
        "orders",
        "find_order",
        "",
    ],
)
def test_unknown_aliases_stay_unknown(called: str) -> None:
    assert from_model_name(called, OFFERED) is None
    assert called not in alias_map(OFFERED)


def test_from_model_name_ignores_non_strings() -> None:
    assert from_model_name(None, OFFERED) is None  # type: ignore[arg-type]


def test_collisions_are_refused() -> None:
    # "a__b.c" and "a.b__c" both become "a__b__c".
    with pytest.raises(ToolNameCollisionError) as caught:
        check_aliases(["a__b.c", "a.b__c", "orders.find_order"])
    assert isinstance(caught.value, ConfigError)
    message = str(caught.value)
    assert "'a__b.c'" in message and "'a.b__c'" in message and "'a__b__c'" in message
    with pytest.raises(ToolNameCollisionError):
        alias_map(["a__b.c", "a.b__c"])


def test_a_dotted_name_colliding_with_an_undotted_one_is_refused() -> None:
    # An undotted name (a control tool's kind) is its own alias, so it can clash too.
    check_aliases(["ask_clarification", "ask_clarification.x"])
    with pytest.raises(ToolNameCollisionError):
        check_aliases(["ask_clarification", "ask_clarification__x", "ask_clarification.x"])


def test_ambiguous_alias_resolves_to_nothing() -> None:
    assert from_model_name("a__b__c", ["a__b.c", "a.b__c"]) is None
    assert from_model_name("a__b__c", ["a__b.c"]) == "a__b.c"


def test_the_same_name_twice_is_not_a_collision() -> None:
    check_aliases(["orders.find_order", "orders.find_order"])
    assert from_model_name("orders__find_order", OFFERED + OFFERED) == "orders.find_order"
    check_aliases([])
    assert alias_map([]) == {}
