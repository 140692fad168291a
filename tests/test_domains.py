"""Domain packs: a third domain added from a temporary folder, with no change to `graph/` or
the hub, runs a request end to end (real stdio server written into the folder, real SQLite
saver, offline model); the bundled packs load; support stays the default.
"""

from __future__ import annotations

import json
import textwrap
import uuid
from pathlib import Path

import pytest

from graph.app.options import MusterOptions
from graph.app.runtime import open_runtime, stream_run
from graph.domains import bundled_domains, load_domain, pack_for_intents
from tests.conftest import MusterEnv, calls_so_far
from workers.errors import ConfigError

TOY_SERVER = '''
"""A toy MCP server for the toy domain: one read-only tool."""

import json

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

from servers.call_log import record

mcp = FastMCP("toy", log_level="WARNING")


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def forecast(query: str) -> str:
    """The weather forecast for what the request asks about."""
    record("toy", "forecast", {"query": query})
    return json.dumps({"query": query, "forecast": "sunny, 24 C"})


if __name__ == "__main__":
    mcp.run()
'''


def write_toy_pack(folder: Path) -> Path:
    """A whole domain pack: manifest, roster, servers file, keyword planner and its server."""
    folder.mkdir()
    (folder / "toy_server.py").write_text(textwrap.dedent(TOY_SERVER), encoding="utf-8")
    files = {
        "domain.json": {
            "name": "toy",
            "description": "weather questions",
            "roster": "roster.json",
            "servers": "servers.json",
            "planner": "planner.json",
        },
        "roster.json": {
            "workers": {
                "forecaster": {
                    "description": "You look up the forecast.",
                    "privileges": ["toy.forecast"],
                    "capabilities": ["weather"],
                    "max_steps": 2,
                },
                "escalation": {
                    "description": "You hand the request to a human.",
                    "privileges": [],
                    "capabilities": ["human"],
                    "max_steps": 1,
                },
            }
        },
        "servers.json": {
            "mcpServers": {
                "toy": {
                    "command": "python",
                    "args": [str(folder / "toy_server.py")],
                    "env": {},
                    "inheritEnv": ["MUSTER_CALL_LOG"],
                }
            }
        },
        "planner.json": {
            "intents": [
                {
                    "name": "weather_question",
                    "label": "the weather",
                    "keywords": ["weather", "rain"],
                    "packets": [
                        {
                            "worker": "forecaster",
                            "objective": "Find the forecast asked for.",
                            "inputs": {"query": "{request}"},
                        }
                    ],
                }
            ]
        },
    }
    for name, data in files.items():
        (folder / name).write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_bundled_packs_load_and_support_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MUSTER_DOMAIN", raising=False)
    assert {"support", "incidents"} <= set(bundled_domains())
    assert load_domain().name == "support"
    incidents = load_domain("incidents")
    assert set(incidents.roster.workers) == {"logs", "metrics", "deploys", "escalation"}
    assert incidents.roster.workers["deploys"].proposes == ("deploys.rollback",)
    assert "deploys.rollback" not in incidents.roster.workers["deploys"].privileges
    assert pack_for_intents(["duplicate_charge"]).name == "support"
    assert pack_for_intents(["incident_triage"]).name == "incidents"
    with pytest.raises(ConfigError, match="unknown domain 'nope'"):
        load_domain("nope")


def test_support_is_loaded_like_any_pack_from_its_own_folder() -> None:
    """Support's parts live in domains/support/ and come in through the same loader; a test
    importing one of its modules gets the very module the plug-in uses."""
    from domains.support.rules import plan_ticket, read_ticket
    from graph.fallbacks import FALLBACKS

    support = load_domain("support")
    assert support.plugin is not None and support.plugin.__name__ == "domains.support.plugin"
    assert (support.planner, support.read) == (plan_ticket, read_ticket)
    assert support.eval_files["dataset"] == support.folder / "tickets.jsonl"
    assert support.servers_file is not None and support.servers_file.name == "servers.json"
    assert FALLBACKS["policy"].name == "cached policy snapshot"
    assert support.subject_argument("orders.issue_refund") == "order_id"
    assert load_domain("incidents").subject_argument("deploys.rollback") == "change_id"


@pytest.mark.integration
async def test_a_toy_domain_from_a_temporary_folder_runs_end_to_end(
    muster_env: MusterEnv, tmp_path: Path
) -> None:
    folder = write_toy_pack(tmp_path / "toy")
    options = MusterOptions.resolve(db=muster_env.checkpoint_db, domain=str(folder))
    assert set(options.roster.workers) == {"forecaster", "escalation"}
    assert list(options.servers.mcp_servers) == ["toy"]
    async with open_runtime(options) as runtime:
        values = await stream_run(
            runtime, f"toy-{uuid.uuid4().hex[:8]}", {"request": "Will it rain in Paris? weather"}
        )
    assert values["intents"] == ["weather_question"]
    assert values["domain"] == options.domain  # the thread's pack, recorded by plan
    (packet,) = values["packets"]
    assert (packet.recipient, packet.tool_allow) == ("forecaster", ("toy.forecast",))
    (report,) = values["reports"]
    assert report.status == "ok" and report.findings[0].tool == "toy.forecast"
    answer = values["answer"]
    assert answer.status == "complete" and not answer.degraded
    assert "sunny, 24 C" in answer.text
    assert calls_so_far(muster_env.call_log, server="toy", tool="forecast") == 1


def _forget_packs(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as a fresh one sees it: no pack loaded, no proposal rule registered
    (what a resume in a new process starts from); restored after the test."""
    import graph.domains
    import workers.proposals

    monkeypatch.setattr(graph.domains, "_LOADED", {})
    monkeypatch.setattr(workers.proposals, "RULES", {})
    monkeypatch.setattr(workers.proposals, "SUGGESTERS", {})
    monkeypatch.setattr(workers.proposals, "BINDERS", {})
    monkeypatch.setattr(workers.proposals, "STATE_BINDING_ARGS", set())


REFUND = "orders.issue_refund"


def test_building_services_registers_the_rosters_proposal_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Support's refund rules are its pack's, not the workers': until the pack loads, the
    review denies a refund; building a run's services loads the roster's pack."""
    from typing import Any, cast

    from graph.services import Services
    from workers.contracts import Handoff, ProposedAction
    from workers.proposals import review_proposal
    from workers.roster import load_roster

    roster = load_roster()  # support's, read without the pack loader
    _forget_packs(monkeypatch)
    packet = Handoff(
        id="billing-1",
        recipient="billing",
        objective="Check the charge.",
        inputs={"order_id": "12345"},
    )
    refund = ProposedAction(tool=REFUND, args={"order_id": "12345", "amount_cents": 100})
    assert review_proposal(refund, packet, [], [REFUND]) == (
        f"{REFUND} has no proposal rule; it cannot be proposed"
    )
    Services(hub=cast(Any, None), roster=roster)
    assert review_proposal(refund, packet, [], [REFUND]) == (
        "no refund_status observation supports this refund"  # support's rule answers
    )


@pytest.mark.integration
async def test_a_thread_resumed_in_a_new_process_reviews_a_refund_with_supports_rules(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ticket paused before its workers ran, resumed where no pack was loaded yet (only
    options read, as a new process's `muster resume` does first): the billing worker's
    refund proposal is reviewed by support's rules, exactly as in a fresh run (the
    duplicated amount, bound to the refunds observed), not denied by default."""
    from checkpoints.threads import thread_config

    ticket = "Order #12345 was charged twice, please refund the duplicate"
    thread = f"resume-{uuid.uuid4().hex[:8]}"
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        fresh = await stream_run(runtime, f"fresh-{uuid.uuid4().hex[:8]}", {"request": ticket})
        await runtime.graph.ainvoke(
            {"request": ticket},
            thread_config(thread),
            context=runtime.services,
            interrupt_before=["dispatch"],
        )
        paused = await runtime.graph.aget_state(thread_config(thread))
    assert paused.next and set(paused.next) == {"dispatch"}
    assert not paused.values.get("reports")  # no worker has run yet

    options = MusterOptions.resolve(db=muster_env.checkpoint_db, domain="support")
    _forget_packs(monkeypatch)
    async with open_runtime(options) as runtime:
        resumed = await stream_run(runtime, thread, None)

    def proposals(values: dict[str, object]) -> list[tuple[str, dict[str, object], int | None]]:
        reports = values["reports"]
        assert isinstance(reports, list)
        return [
            (a.tool, a.args, a.observed_refunded_cents)
            for r in reports
            if r.worker == "billing"
            for a in r.proposed_actions
        ]

    expected = (
        REFUND,
        {"order_id": "12345", "amount_cents": 12900, "expected_refunded_cents": 0},
        0,
    )
    assert proposals(fresh) == proposals(resumed) == [expected]
    billing = [r for r in resumed["reports"] if r.worker == "billing"]
    assert not any("no proposal rule" in r.note for r in billing)


def test_the_plain_layout_is_neutral_and_support_brings_its_wording() -> None:
    """`render_text` says "Draft reply" and "review this request" unless the pack gives its
    labels; support's are the ticket wording its answers always had."""
    from domains.support.answer import LABELS
    from graph.answer_render import AnswerLabels, render_text
    from workers.contracts import Answer

    answer = Answer(
        text="", status="partial", degraded=False, needs_human=True, customer_reply="Hello."
    )

    def render(labels: AnswerLabels) -> str:
        return render_text(
            answer, request="r", labels=labels, policies=[], action_lines=[], recovery_lines=[]
        )

    neutral = render(AnswerLabels())
    assert "\nDraft reply:\n  Hello.\n" in neutral
    assert neutral.endswith("NEEDS HUMAN: a person should review this request.")
    ticket = render(LABELS)
    assert "\nDraft reply to the customer:\n  Hello.\n" in ticket
    assert ticket.endswith("NEEDS HUMAN: a person should review this ticket.")


def test_a_clarification_fills_the_packs_subject_input_only() -> None:
    """The request's subject ids are the pack's reading (support: order ids, in the packet
    input `order_id`); a pack without a subject input gets none from a clarification."""
    from graph.recovery_steps import clarified
    from workers.contracts import Handoff

    support, incidents = load_domain("support"), load_domain("incidents")
    assert support.subject_input == "order_id"
    assert support.subject_ids("Order #12345 was charged twice") == ("12345",)
    assert incidents.subject_input is None
    packet = Handoff(id="billing-1", recipient="billing", objective="Check the charge.")
    again = clarified(packet, "It is order #12345.", roster=support.roster)
    assert again.inputs["order_id"] == "12345" and again.attempt == 2
    other = clarified(packet, "It is order #12345.", roster=incidents.roster)
    assert "order_id" not in other.inputs and other.inputs["clarification"]


def test_a_keyword_table_says_what_it_did_not_account_for(tmp_path: Path) -> None:
    """A pack that is only a table still abstains: an ask holding none of its keywords is
    unaccounted, a denied keyword is no intent, and a request with no intent is unaccounted
    whole (the engine then answers partial, for a human)."""
    pack = load_domain(str(write_toy_pack(tmp_path / "toy")))
    both = pack.read("Hi! Will it rain in Paris tomorrow? Also, can you book me a taxi? Thanks")
    assert both.intents == ("weather_question",)
    assert both.unaccounted == ("Also, can you book me a taxi?",) and both.confidence == 0.5
    clear = pack.read("Hello, will it rain in Paris tomorrow? Thank you")
    assert (clear.unaccounted, clear.confidence) == ((), 1.0)
    denied = pack.read("There is no rain in the forecast I need. Please book a taxi.")
    assert denied.intents == () and denied.unaccounted and denied.confidence == 0.0


@pytest.mark.integration
async def test_a_table_packs_unaccounted_ask_makes_the_answer_partial_for_a_human(
    muster_env: MusterEnv, tmp_path: Path
) -> None:
    folder = write_toy_pack(tmp_path / "toy")
    options = MusterOptions.resolve(db=muster_env.checkpoint_db, domain=str(folder))
    async with open_runtime(options) as runtime:
        values = await stream_run(
            runtime,
            f"toy-{uuid.uuid4().hex[:8]}",
            {"request": "Will it rain in Paris? And can you refund my umbrella?"},
        )
    answer = values["answer"]
    assert (answer.status, answer.needs_human) == ("partial", True)
    assert any("refund my umbrella" in q for q in answer.open_questions), answer.open_questions


def test_a_thread_answers_from_its_own_pack_when_two_share_an_intent(tmp_path: Path) -> None:
    """Two packs with one intent name: a thread's pack is the one `plan` recorded in its
    state, not the first loaded pack that knows the intent."""
    from graph.domains import pack_for_state

    first = load_domain(str(write_toy_pack(tmp_path / "first")))
    second = load_domain(str(write_toy_pack(tmp_path / "second")))
    state = {"domain": second.ref, "intents": ["weather_question"]}
    assert pack_for_state(state).folder == second.folder
    assert pack_for_state({**state, "domain": first.ref}).folder == first.folder
    assert pack_for_state({"intents": ["duplicate_charge"]}).name == "support"  # no record


def test_a_misspelt_hook_is_refused_not_silently_off(tmp_path: Path) -> None:
    folder = write_toy_pack(tmp_path / "toy")
    (folder / "plugin.py").write_text(
        "BEFORE_EXECUTES = {}\n\ndef helper():\n    return 1\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError, match="did you mean 'BEFORE_EXECUTE'"):
        load_domain(str(folder))
    pack = load_domain("support")
    with pytest.raises(KeyError, match="no pack hook"):
        pack.hook("BEFORE_EXECUTES")
