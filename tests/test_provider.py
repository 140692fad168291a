"""The provider path, end to end: the real `ChatOpenAI` against a scripted OpenAI-compatible
server on loopback plans the ticket (structured output) and works every packet (tool calls
under provider-safe aliases), through the real graph, hub and MCP servers."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, SecretStr

from graph.app.runtime import open_runtime, stream_run
from graph.planners.llm import make_llm_planner, planner_prompt
from servers.call_log import count_calls, read_calls
from tests.conftest import MusterEnv, by_worker
from tests.fixtures.openai_server import FINAL, RunningServer
from workers.control_tools import ASK_CLARIFICATION, DECLINE_TASK, PROPOSE_ACTION
from workers.errors import PlannerCallError, UnknownModelError
from workers.models import load_model_factory
from workers.roster import load_roster
from workers.tool_names import to_model_name

CONTROL = {ASK_CLARIFICATION, DECLINE_TASK}
BILLING_TOOLS = {"orders__find_order", "orders__refund_status", *CONTROL, PROPOSE_ACTION}
POLICY_TOOLS = {"policy__check_policy", *CONTROL}
PROVIDER_TICKET = "Customer says order #12333 was charged twice. What happened and what can we do?"
"""The reference ticket; the scripted plan names no intents, so billing proposes nothing."""
COMMS_TOOLS = {"kb__search_kb", "kb__get_article", *CONTROL}


def packet(
    recipient: str, objective: str, inputs: dict[str, str], depends_on: list[str] | None = None
) -> dict[str, Any]:
    """One packet as the model writes it (inputs as name/value pairs)."""
    return {
        "recipient": recipient,
        "objective": objective,
        "inputs": [{"name": k, "value": v} for k, v in inputs.items()],
        "depends_on": depends_on or [],
    }


BILLING = packet(
    "billing", "Establish the charges and refund status of order 12333.", {"order_id": "12333"}
)
PLAN = {
    "packets": [
        BILLING,
        BILLING,  # the model repeats itself: validation drops the duplicate
        packet("policy", "Find the policy on duplicate charges.", {"topic": "duplicate_charge"}),
        packet(
            "comms",
            "Find the knowledge-base articles that answer the customer.",
            {"query": "duplicate charge refund"},
            depends_on=["policy-3"],
        ),
    ]
}
WORKERS: dict[str, list[Any]] = {
    # Billing is given the order record as a shared fact (resolved once by the plan), so it
    # only asks for the refund status.
    "billing": [[("orders__refund_status", {"order_id": "12333"})], FINAL],
    "policy": [[("policy__check_policy", {"topic": "duplicate_charge"})], FINAL],
    "comms": [[("kb__search_kb", {"query": "duplicate charge refund"})], FINAL],
}


def chat_model(server: RunningServer) -> ChatOpenAI:
    return ChatOpenAI(
        model="gpt-test", base_url=server.base_url, api_key=SecretStr("test"), max_retries=0
    )


async def run(
    env: MusterEnv, server: RunningServer, request: str = PROVIDER_TICKET
) -> dict[str, Any]:
    chat = chat_model(server)
    async with open_runtime(
        db=env.checkpoint_db, models=lambda worker: chat, planner=make_llm_planner(chat)
    ) as runtime:
        return await stream_run(runtime, f"t-{uuid.uuid4().hex[:8]}", {"request": request})


@pytest.mark.integration
async def test_ticket_end_to_end_through_chat_openai(
    muster_env: MusterEnv, openai_server: RunningServer
) -> None:
    script = openai_server.script
    script.plan = PLAN
    script.workers = WORKERS

    values = await run(muster_env, openai_server)

    # The plan came from the model, through structured output, and was validated by code.
    (planner,) = script.of_kind("planner")
    response_format = planner.body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "Plan"
    assert response_format["json_schema"]["strict"] is True
    assert planner.body["messages"][-1] == {"role": "user", "content": PROVIDER_TICKET}
    assert planner.body["messages"][0]["content"] == planner_prompt(load_roster())
    assert "tools" not in planner.body
    assert [p.id for p in values["packets"]] == ["billing-1", "policy-3", "comms-4"]
    assert values["plan_notes"] == [
        "dropped billing-2: duplicate of billing-1",
        "resolved order_record 12333 once for 2 packet(s)",  # billing and policy need it
    ]
    billing_packet = values["packets"][0]
    # The supervisor adds the ticket's intents to a packet whose worker may propose actions.
    assert billing_packet.inputs == {"order_id": "12333", "intents": "duplicate_charge"}
    assert billing_packet.tool_allow == ("orders.find_order", "orders.refund_status")
    assert values["packets"][2].depends_on == ("policy-3",)

    # Each worker was offered its own belt only, under provider-safe names.
    belts = {"billing": BILLING_TOOLS, "policy": POLICY_TOOLS, "comms": COMMS_TOOLS}
    for worker, belt in belts.items():
        turns = script.of_kind(f"worker:{worker}")
        assert len(turns) == 2, worker
        for exchange in turns:
            assert exchange.status == 200, exchange.reply
            assert set(exchange.tool_names) == belt, worker
            assert PROVIDER_TICKET not in exchange.text  # clean context: the packet only
    find_order = script.of_kind("worker:billing")[0].tool_schema("orders__find_order")
    assert find_order["parameters"]["required"] == ["order_id"]
    # The dependent packet ran after the packet it depends on.
    order = [e.kind for e in script.exchanges]
    assert order.index("worker:comms") > max(
        i for i, kind in enumerate(order) if kind == "worker:policy"
    )

    # The calls reached the real MCP servers, once each, under their qualified names.
    log = muster_env.call_log
    assert count_calls(log, server="orders", tool="find_order") == 1
    assert count_calls(log, server="orders", tool="refund_status") == 1
    assert count_calls(log, server="policy", tool="check_policy") == 1
    assert count_calls(log, server="kb", tool="search_kb") == 1
    assert count_calls(log, server="orders", tool="issue_refund") == 0

    reports = by_worker(values["reports"])
    (billing,) = reports["billing"]
    assert billing.status == "ok", billing.note
    assert [f.tool for f in billing.findings] == ["orders.find_order", "orders.refund_status"]
    assert [r.tool for r in billing.tool_calls] == ["orders.refund_status"]
    assert [f.call_id for f in billing.findings] == ["shared-12333", "call_billing_0_0"]
    first_turn = script.of_kind("worker:billing")[0]
    assert '"tool": "orders__find_order"' in first_turn.text  # the shared fact, as shown
    assert "call_billing_0_0" in billing.note and "12333" in billing.note
    assert billing.tokens == sum(e.usage["total_tokens"] for e in script.of_kind("worker:billing"))
    assert billing.steps_used == 2

    answer = values["answer"]
    assert values["unverified"] == []
    assert answer.status == "complete", answer.text
    assert not answer.degraded
    assert "12333" in answer.text


@pytest.mark.integration
async def test_unknown_alias_is_refused_by_the_hub(
    muster_env: MusterEnv, openai_server: RunningServer
) -> None:
    """Only an exact offered alias resolves; anything else reaches the hub as sent, and the
    hub refuses it. Nothing is guessed, and no refused call reaches a server."""
    script = openai_server.script
    script.plan = {"packets": [BILLING]}
    script.workers = {
        "billing": [
            [
                ("orders__issue_refund", {"order_id": "12333", "amount_cents": 1}),  # not offered
                ("kb__search_kb", {"query": "refund"}),  # another worker's tool
                ("Orders__find_order", {"order_id": "12333"}),  # no case folding
            ],
            [("orders__find_order", {"order_id": "12333"})],
            FINAL,
        ]
    }
    values = await run(muster_env, openai_server)

    (billing,) = by_worker(values["reports"])["billing"]
    outcomes = [(r.tool, r.outcome) for r in billing.tool_calls]
    assert outcomes == [
        ("orders__issue_refund", "not_allowed"),
        ("kb__search_kb", "not_allowed"),
        ("Orders__find_order", "not_allowed"),
        ("orders.find_order", "ok"),
    ]
    calls = read_calls(muster_env.call_log)
    # The plan's one shared lookup of the order, then billing's own allowed call.
    assert [(c["server"], c["tool"]) for c in calls] == [("orders", "find_order")] * 2
    # The refusals went back to the model as tool results it can act on.
    second = script.of_kind("worker:billing")[1]
    refusals = [m for m in second.body["messages"] if m["role"] == "tool"]
    assert len(refusals) == 3 and all("not allowed" in m["content"] for m in refusals)


@pytest.mark.integration
async def test_a_bad_llm_plan_is_replaced_by_the_packs_own_plan(
    muster_env: MusterEnv, openai_server: RunningServer
) -> None:
    """A model's plan naming a worker that does not exist never runs, and never ends the
    ticket (it was exit 2): the pack's rules plan instead, and the answer says so."""
    script = openai_server.script
    script.plan = {"packets": [BILLING, packet("wizard", "Cast a refund spell.", {})]}
    script.workers = WORKERS
    values = await run(muster_env, openai_server)
    assert "wizard" not in {p.recipient for p in values["packets"]}
    assert {p.recipient for p in values["packets"]} == {"billing", "policy", "comms"}
    # Asked twice (the plan, then once more with the errors), refused both times.
    first, second = script.of_kind("planner")
    assert "That plan was refused" in second.text and "(got 'wizard')" in second.text
    assert values["plan_fallback"].count("(got 'wizard')") == 2
    assert values["plan_notes"][0].startswith("the planner's plan was refused")
    assert any("the pack's rules planned instead" in q for q in values["answer"].open_questions)


@pytest.mark.integration
async def test_a_cyclic_llm_plan_is_replaced_too(
    muster_env: MusterEnv, openai_server: RunningServer
) -> None:
    script = openai_server.script
    script.plan = {
        "packets": [
            packet("policy", "Find the refund policy.", {"topic": "refunds"}, ["comms-2"]),
            packet("comms", "Find refund articles.", {"query": "refund"}, ["policy-1"]),
        ]
    }
    script.workers = WORKERS
    values = await run(muster_env, openai_server)
    assert "cycle" in values["plan_fallback"]
    assert values["answer"] is not None


async def test_planner_failure_is_a_plan_error(openai_server: RunningServer) -> None:
    """A provider error (here a rejected API key) is a PlanError naming the cause: nothing
    was planned (a `PlannerCallError`, which the plan node does not replace)."""
    chat = ChatOpenAI(
        model="gpt-test", base_url=openai_server.base_url, api_key=SecretStr("wrong"), max_retries=0
    )
    planner = make_llm_planner(chat)
    with pytest.raises(PlannerCallError, match="AuthenticationError"):
        await planner(PROVIDER_TICKET, load_roster())


async def test_strict_schema_refuses_a_dict_field(openai_server: RunningServer) -> None:
    """Why `PlannedPacket.inputs` is a list of name/value pairs: OpenAI's strict structured
    output refuses an object schema without additionalProperties=false, as `dict` gives.
    (The Plan schema itself passes the same check in every planner test above.)"""
    import openai

    class DictPacket(BaseModel):
        inputs: dict[str, str]

    structured = chat_model(openai_server).with_structured_output(DictPacket)
    with (
        pytest.raises(openai.BadRequestError, match="additionalProperties"),
        # langchain-openai recognises the real API's message and adds this hint.
        pytest.warns(UserWarning, match="Invalid schema for OpenAI's structured output"),
    ):
        await structured.ainvoke("plan")


async def test_llm_planner_maps_the_roster(openai_server: RunningServer) -> None:
    openai_server.script.plan = {
        "packets": [
            packet("policy", "Find the refund policy.", {"topic": "refunds", "x": "1"}),
            packet("escalation", "Hand the ticket to a human.", {"request_summary": "angry"}),
        ]
    }
    roster = load_roster()
    packets = await make_llm_planner(chat_model(openai_server))("refund please", roster)
    assert [p.id for p in packets] == ["policy-1", "escalation-2"]
    assert packets[0].tool_allow == roster.workers["policy"].privileges
    assert packets[0].max_steps == roster.workers["policy"].max_steps
    assert packets[0].inputs == {"topic": "refunds", "x": "1"}
    assert packets[1].tool_allow == ()
    assert packets[1].max_steps == roster.workers["escalation"].max_steps


async def test_streaming_tool_calls_parse(openai_server: RunningServer) -> None:
    """The server's SSE format is what ChatOpenAI parses (for stream_mode='messages')."""
    openai_server.script.workers = {"billing": [[("orders__find_order", {"order_id": "1"})]]}
    chat = chat_model(openai_server).bind_tools(
        [{"type": "function", "function": {"name": "orders__find_order", "parameters": {}}}]
    )
    messages = [("system", "You are the billing specialist. Hi."), ("user", "go")]
    merged: Any = None
    async for chunk in chat.astream(messages):
        merged = chunk if merged is None else merged + chunk
    assert merged.tool_calls == [
        {
            "name": "orders__find_order",
            "args": {"order_id": "1"},
            "id": "call_billing_0_0",
            "type": "tool_call",
        }
    ]


async def test_dotted_tool_names_are_refused_like_openai_does(
    openai_server: RunningServer,
) -> None:
    """Why the aliases exist: the real API rejects a dotted function name with a 400."""
    import openai

    chat = chat_model(openai_server).bind_tools(
        [{"type": "function", "function": {"name": "orders.find_order", "parameters": {}}}]
    )
    with pytest.raises(openai.BadRequestError, match="does not match pattern"):
        await chat.ainvoke([("system", "You are the billing specialist."), ("user", "go")])
    assert to_model_name("orders.find_order") == "orders__find_order"


async def test_load_model_factory_builds_chat_openai_from_env(
    openai_server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    factory = load_model_factory("openai:gpt-test")
    model = factory("billing")
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "gpt-test"
    assert factory("policy") is model
    reply = await model.ainvoke("ping")
    assert reply.content == "Hello from the scripted server."
    (exchange,) = openai_server.script.of_kind("other")
    assert exchange.headers["authorization"] == "Bearer test"
    assert exchange.body["model"] == "gpt-test"


def test_load_model_factory_unknown_provider() -> None:
    with pytest.raises(UnknownModelError) as caught:
        load_model_factory("nosuchprovider:x")
    message = str(caught.value)
    assert "nosuchprovider:x" in message
    assert "nosuchprovider" in message.split(":", 1)[1]  # the cause names the provider too


@pytest.mark.slow
@pytest.mark.integration
def test_cli_runs_a_ticket_on_a_provider_model_and_llm_planner(
    muster_env: MusterEnv, openai_server: RunningServer
) -> None:
    openai_server.script.plan = PLAN
    openai_server.script.workers = WORKERS
    result = muster_env.cli(
        "run",
        PROVIDER_TICKET,
        "--model",
        "openai:gpt-test",
        "--planner",
        "llm",
        "--json",
        extra_env={"OPENAI_API_KEY": "test", "OPENAI_BASE_URL": openai_server.base_url},
    )
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["answer"]["status"] == "complete"
    assert sorted(r["worker"] for r in payload["reports"]) == ["billing", "comms", "policy"]
    assert len(openai_server.script.of_kind("planner")) == 1
    assert count_calls(muster_env.call_log, server="orders", tool="find_order") == 1


@pytest.mark.slow
def test_cli_llm_planner_refuses_the_offline_model(muster_env: MusterEnv) -> None:
    result = muster_env.cli("run", PROVIDER_TICKET, "--planner", "llm")
    assert result.returncode == 2
    assert "needs a provider model" in result.stderr


async def test_a_provider_model_writes_the_answer_and_unsupported_claims_are_removed(
    muster_env: MusterEnv, openai_server: RunningServer
) -> None:
    script = openai_server.script
    script.plan = PLAN
    script.workers = WORKERS
    honest = "L. Moreau was charged $89.00 twice for order 12333 on 2025-03-02."
    invented = "Order 12333 was refunded $500.00 on 2026-01-01."
    script.answer = {
        "summary": [
            {"text": honest, "cites": ["billing-1/F1"]},
            {"text": invented, "cites": ["billing-1/F1"]},
            {"text": "The customer is a loyal member since 2019.", "cites": ["nowhere/F9"]},
        ],
        "customer_reply": "Hello L. Moreau, the duplicate charge on order 12333 was refunded.",
    }

    values = await run(muster_env, openai_server)

    (writer,) = script.of_kind("writer")
    assert writer.body["response_format"]["json_schema"]["strict"] is True
    sent = json.loads(writer.body["messages"][-1]["content"])
    assert {f["id"] for f in sent["findings"]} >= {"billing-1/F1", "billing-1/F2"}
    answer = values["answer"]
    assert answer.written_by == "model"
    assert [c.text for c in answer.summary] == [honest]
    assert answer.customer_reply.startswith("Hello L. Moreau, the duplicate charge")
    removed = [r for r in answer.degraded_reasons if r.startswith("unverified claim removed")]
    assert len(removed) == 2 and "$500.00" in removed[0] and "2026-01-01" in removed[0]
    summary_part = answer.text.split("DEGRADED")[0]  # removed claims are named only there
    assert answer.degraded and invented not in summary_part and honest in summary_part


async def test_a_model_reply_with_an_invented_amount_is_replaced_by_the_composed_one(
    muster_env: MusterEnv, openai_server: RunningServer
) -> None:
    script = openai_server.script
    script.plan = PLAN
    script.workers = WORKERS
    script.answer = {"summary": [], "customer_reply": "We will refund you $1,000.00 today."}

    answer = (await run(muster_env, openai_server))["answer"]

    assert "$1,000.00" not in answer.customer_reply and answer.customer_reply
    assert any("$1,000.00" in r for r in answer.degraded_reasons)


async def test_a_failing_answer_writer_leaves_the_composed_answer_and_says_so(
    muster_env: MusterEnv, openai_server: RunningServer
) -> None:
    script = openai_server.script
    script.plan = PLAN
    script.workers = WORKERS
    script.answer = None  # the provider answers 500

    answer = (await run(muster_env, openai_server))["answer"]

    assert answer.written_by == "rules" and answer.summary and answer.customer_reply
    assert any("could not write the answer" in r for r in answer.degraded_reasons)


@pytest.mark.integration
async def test_an_llm_plan_whose_intents_the_reader_does_not_share_asks_a_human(
    muster_env: MusterEnv, openai_server: RunningServer
) -> None:
    """The pack's reader reads every request the LLM planned too: where the intents the model
    gave its packets differ (here a refund request for a duplicate charge), nobody can say
    which is right, so the answer is partial, needs a human and says why."""
    script = openai_server.script
    disputed = packet(
        "billing",
        "Establish the charges and refund status of order 12333.",
        {"order_id": "12333", "intents": "refund_request"},
    )
    script.plan = {"packets": [disputed, *PLAN["packets"][2:3]]}
    script.workers = WORKERS

    values = await run(muster_env, openai_server)

    assert values["intents"] == ["duplicate_charge"]
    assert values["unaccounted"] == [
        "the planner read intents ['refund_request'] but the pack's reader read "
        "['duplicate_charge']"
    ]
    answer = values["answer"]
    assert (answer.status, answer.needs_human) == ("partial", True)
    assert any("the planner read intents" in q for q in answer.open_questions)


PROSE_ONLY = "The duplicate charge policy allows a refund of the second charge."
"""A weak model's answer without any tool call, written or native."""


@pytest.mark.integration
async def test_a_worker_that_answers_without_its_tools_is_told_once_to_call_one(
    muster_env: MusterEnv, openai_server: RunningServer
) -> None:
    script = openai_server.script
    script.plan = PLAN
    script.workers = {
        **WORKERS,
        "policy": [PROSE_ONLY, [("policy__check_policy", {"topic": "duplicate_charge"})], FINAL],
    }
    values = await run(muster_env, openai_server)
    (policy,) = [r for r in values["reports"] if r.worker == "policy"]
    assert (policy.status, [c.tool for c in policy.tool_calls]) == ("ok", ["policy.check_policy"])
    second = script.of_kind("worker:policy")[1].body["messages"]
    assert "You must call one of these tools" in second[-1]["content"]


@pytest.mark.integration
async def test_a_worker_that_never_calls_its_tools_fails_and_is_recovered(
    muster_env: MusterEnv, openai_server: RunningServer
) -> None:
    """'No tool tried' is no success for a worker given tools: after the corrective turn it
    fails with its own reason, and recovery puts the cached policy in, marked as such."""
    script = openai_server.script
    script.plan = PLAN
    script.workers = {**WORKERS, "policy": [PROSE_ONLY, "The policy says refund it."]}
    values = await run(muster_env, openai_server)
    failed = [r for r in values["reports"] if r.worker == "policy" and r.status == "failed"]
    assert [r.reason for r in failed] == ["no_tool_call"]
    assert len(script.of_kind("worker:policy")) == 2  # the answer, and the one correction
    assert [r.strategy for r in values["recoveries"]] == ["fallback"]
    assert values["answer"].degraded
