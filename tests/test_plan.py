"""Plan validation: whoever wrote the plan, code checks it before anything runs."""

from __future__ import annotations

import pytest

from domains.support.order_ids import find_order_ids
from domains.support.rules import plan_ticket, read_ticket
from graph.plan_validation import topological_order, validate_plan
from graph.planners import MAX_STEPS_CAP, TIMEOUT_CAP_S
from workers.contracts import Handoff
from workers.errors import PlanError
from workers.roster import load_roster

ROSTER = load_roster()


def packet(pid: str, recipient: str = "comms", **fields: object) -> Handoff:
    base: dict[str, object] = {
        "id": pid,
        "recipient": recipient,
        "objective": f"Do {pid}.",
        "inputs": {"query": pid},
        "tool_allow": ("kb.",),
    }
    base.update(fields)
    return Handoff.model_validate(base)


def test_demo_ticket_plans_three_specialists_with_disjoint_belts() -> None:
    packets = plan_ticket(
        "Customer says order #12345 was charged twice. What happened and what can we do?", ROSTER
    )
    assert [p.recipient for p in packets] == ["billing", "policy", "comms"]
    assert packets[0].inputs == {"order_id": "12345", "intents": "duplicate_charge"}
    assert packets[2].inputs == {"article_id": "KB-201"}
    assert packets[1].inputs == {"topic": "duplicate_charge"}
    belts = [set(p.tool_allow) for p in packets]
    assert belts[0] & belts[1] == set() and belts[1] & belts[2] == set()


def test_order_ids_are_read_in_all_usual_forms() -> None:
    assert find_order_ids("orders #12345, #12346 and #12345 again") == ["12345", "12346"]
    assert find_order_ids("order 12345 and order no. 12346") == ["12345", "12346"]
    # A bare number is not an order id: dates, years, amounts and phone numbers are not.
    assert find_order_ids("charged $1299 on 2025-03-14, call 5551234 or 555.1234") == []
    assert find_order_ids("charged twice on 2025-03-14 for order #12345") == ["12345"]
    # A group of digits beside another, or with a leading zero, is a phone number's part.
    phone = "The parcel (12375) came damaged. I'm on 07911 123456 if the courier needs me."
    assert find_order_ids(phone) == ["12375"]
    assert find_order_ids("refund the order, ring me on 12345 678901") == []


def test_unknown_recipient_is_refused() -> None:
    with pytest.raises(PlanError, match="unknown worker 'hacker'"):
        validate_plan([packet("x", recipient="hacker")], ROSTER)


def test_widened_allowlist_is_narrowed_with_a_note() -> None:
    widened = packet(
        "w", tool_allow=("kb.", "orders.", "orders.issue_refund", "policy.check_policy")
    )
    result = validate_plan([widened], ROSTER)
    assert result.packets[0].tool_allow == ("kb.",)
    assert any("may not use" in note and "orders.issue_refund" in note for note in result.notes)


def test_exact_tool_within_a_prefix_privilege_is_kept() -> None:
    narrowed = packet("n", recipient="policy", tool_allow=("policy.check_policy",))
    assert validate_plan([narrowed], ROSTER).packets[0].tool_allow == ("policy.check_policy",)


def test_prefix_grant_needs_a_prefix_privilege() -> None:
    billing = packet("b", recipient="billing", tool_allow=("orders.",))
    assert validate_plan([billing], ROSTER).packets[0].tool_allow == ()


def test_duplicates_are_dropped_by_fingerprint_and_budgets_capped() -> None:
    same = {"objective": "Find KB-201.", "inputs": {"query": "duplicate"}}
    first = packet("a", max_steps=500, timeout_s=10_000, **same)
    duplicate = packet("b", max_steps=2, **same)  # the same work under another id
    result = validate_plan([first, duplicate], ROSTER)
    assert [p.id for p in result.packets] == ["a"]
    assert (result.packets[0].max_steps, result.packets[0].timeout_s) == (
        MAX_STEPS_CAP,
        TIMEOUT_CAP_S,
    )
    assert any("duplicate of a" in note for note in result.notes)


def test_dependency_cycle_is_rejected_with_the_cycle_named() -> None:
    a = packet("a", depends_on=("c",))
    b = packet("b", depends_on=("a",), inputs={"query": "b2"})
    c = packet("c", depends_on=("b",), inputs={"query": "c2"})
    with pytest.raises(PlanError, match="cycle: a -> c -> b -> a"):
        validate_plan([a, b, c], ROSTER)


def test_unknown_dependency_is_rejected() -> None:
    with pytest.raises(PlanError, match="unknown packets"):
        topological_order([packet("a", depends_on=("ghost",))])


def test_packets_come_out_in_dependency_order() -> None:
    later = packet("later", depends_on=("first",), inputs={"query": "l"})
    first = packet("first")
    assert [p.id for p in validate_plan([later, first], ROSTER).packets] == ["first", "later"]


def test_duplicate_ids_are_refused_and_dependents_follow_the_kept_duplicate() -> None:
    with pytest.raises(PlanError, match="more than once"):
        validate_plan([packet("a"), packet("a", inputs={"query": "other"})], ROSTER)
    same = {"objective": "Find KB-201.", "inputs": {"query": "duplicate"}}
    kept, dropped = packet("k", **same), packet("d", **same)
    later = packet("later", depends_on=("d",), inputs={"query": "l"}, attempt=7)
    result = validate_plan([kept, dropped, later], ROSTER)
    assert [p.id for p in result.packets] == ["k", "later"]
    assert result.packets[1].depends_on == ("k",)
    assert result.packets[1].attempt == 1  # retries are counted by recovery, not planners


def test_every_intent_is_found_in_several_languages() -> None:
    french = read_ticket(
        "Bonjour, j'ai été débité deux fois pour ma commande n°12343 et le colis n'est "
        "toujours pas arrivé !"
    )
    assert french.intents == ("duplicate_charge", "late_delivery")
    assert french.order_ids == ("12343",) and french.language == "French"
    german = read_ticket("Meine Bestellung 12350 ist kaputt angekommen, ich will mein Geld zurück")
    assert "damaged_item" in german.intents and german.order_ids == ("12350",)
    assert read_ticket("hello").intents == ()
    assert read_ticket("Please cancel order #12344, I picked the wrong colour.").intents == (
        "cancellation",
    )


def test_no_intent_plans_nothing_and_a_policy_question_needs_no_order() -> None:
    assert plan_ticket("hello", ROSTER) == []
    packets = plan_ticket("What is your returns policy for unused items?", ROSTER)
    assert "billing" not in [p.recipient for p in packets]
    own = plan_ticket("I was charged twice for my order", ROSTER)
    assert own[0].recipient == "billing" and "order_id" not in own[0].inputs
