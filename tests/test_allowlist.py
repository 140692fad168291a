"""Qualified names and allowlist matching: exact, no trimming, no case folding, whole segments."""

from __future__ import annotations

import pytest

from workers.hub.allowlist import (
    is_allowed,
    is_valid_entry,
    is_valid_qualified_name,
    is_valid_server_name,
    qualify,
)

CYRILLIC_O = "\u043e"  # looks like Latin "o"


@pytest.mark.parametrize(
    "name",
    ["orders.find_order", "kb.search_kb", "a.b", "my-server.tool-1", "A_1.B_2", "x9.Y"],
)
def test_valid_qualified_names(name: str) -> None:
    assert is_valid_qualified_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "orders",
        "orders.",
        ".find_order",
        "orders..find_order",
        "orders.find.order",
        "orders.find_order ",
        " orders.find_order",
        "orders.find_order\n",
        "orders .find_order",
        "orders.find order",
        f"{CYRILLIC_O}rders.find_order",
        "orders.find_ordér",
        "orders.tööl",
        "orders/find_order",
        "orders:find_order",
        "orders.find_order\x00",
    ],
)
def test_invalid_qualified_names(name: str) -> None:
    assert not is_valid_qualified_name(name)


def test_qualify_and_server_names() -> None:
    assert qualify("orders", "find_order") == "orders.find_order"
    assert is_valid_server_name("orders")
    assert is_valid_server_name("my-server_2")
    for bad in ["", "a.b", "ord ers", f"{CYRILLIC_O}rders", "orders\n"]:
        assert not is_valid_server_name(bad)


def test_exact_entry_admits_only_that_name() -> None:
    allow = ["orders.find_order"]
    assert is_allowed("orders.find_order", allow)
    assert not is_allowed("orders.refund_status", allow)
    assert not is_allowed("orders.find_orders", allow)
    assert not is_allowed("orders.find_orde", allow)


@pytest.mark.parametrize(
    "name",
    [
        "orders.find_order ",  # trailing space: no trimming
        "ORDERS.find_order",  # no case folding
        "orders..find_order",  # double dot
        f"{CYRILLIC_O}rders.find_order",  # Unicode look-alike
        "orders.find_order\n",
        "\torders.find_order",
    ],
)
def test_refusals_against_exact_and_prefix_entries(name: str) -> None:
    assert not is_allowed(name, ["orders.find_order"])
    assert not is_allowed(name, ["orders."])


def test_exact_entry_is_case_sensitive_in_the_tool_part() -> None:
    assert not is_allowed("orders.FIND_ORDER", ["orders.find_order"])
    assert not is_allowed("orders.find_order", ["orders.FIND_ORDER"])


def test_prefix_matches_whole_server_segment_only() -> None:
    assert is_allowed("orders.find_order", ["orders."])
    # The hub, not the allowlist, keeps write tools away from workers.
    assert is_allowed("orders.issue_refund", ["orders."])
    assert not is_allowed("ordersx.find_order", ["orders."])
    assert not is_allowed("ordersx.refund", ["orders."])
    assert not is_allowed("xorders.find_order", ["orders."])
    assert not is_allowed("order.find_order", ["orders."])
    assert not is_allowed("kb.search_kb", ["orders."])


@pytest.mark.parametrize(
    "entry",
    [
        "orders",  # no dot: neither a name nor a prefix
        "orders..",
        ".",
        "",
        "*",
        "orders.*",
        "orders.find_order ",
        " orders.",
        "ORDERS.",
        f"{CYRILLIC_O}rders.",
        "orders.find.order",
    ],
)
def test_invalid_entries_admit_nothing(entry: str) -> None:
    for name in ["orders.find_order", "orders.refund_status", "kb.search_kb"]:
        assert not is_allowed(name, [entry]), (entry, name)


def test_entry_validity() -> None:
    assert is_valid_entry("orders.")
    assert is_valid_entry("orders.find_order")
    assert not is_valid_entry("orders")
    assert not is_valid_entry("orders..")
    assert not is_valid_entry("orders.*")


def test_empty_allowlist_and_mixed_entries() -> None:
    assert not is_allowed("orders.find_order", [])
    allow = ["bogus", "ORDERS.", "kb.", "orders.find_order"]
    assert is_allowed("kb.search_kb", allow)
    assert is_allowed("orders.find_order", allow)
    assert not is_allowed("orders.refund_status", allow)


def test_bare_string_allowlist_is_not_iterated_as_characters() -> None:
    # A str is a Sequence[str]; treating "orders." as ['o', 'r', ...] must not admit anything.
    assert not is_allowed("orders.find_order", "orders.find_order")
    assert not is_allowed("orders.find_order", "orders.")


def test_tuple_allowlist() -> None:
    assert is_allowed("kb.search_kb", ("kb.search_kb",))
