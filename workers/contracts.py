"""The typed contracts that cross every boundary: the LLM, MCP and the checkpoint.

Read this module first. A `Handoff` is everything a worker sees; a `Report` is everything the
supervisor gets back; an `Answer` is what the user gets. They are pydantic models because they
are validated where they are produced (a planner, a model, a checkpoint) and serialised into
SQLite checkpoints.

They live in `workers/` rather than `graph/` so that the data flows one way: `graph` imports
`workers`, and `workers` never imports `graph`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# The one digest module (servers/digests.py, standard library only); `canonical_json` is
# re-exported for the domain packs, which may import the workers but never the servers.
from servers.digests import canonical_json as canonical_json
from servers.digests import short_digest

FailureReason = Literal[
    "budget",
    "tool_error",
    "timeout",
    "unavailable",
    "loop",
    "ambiguous",
    "refused",
    "crashed",
    "no_tool_call",
    "unknown_tool",
    "bad_arguments",
    "model_timeout",
    "model_refused",
    "provider_auth",
    "provider_quota",
    "unknown_model",
    "provider_unreachable",
]
"""Why a worker failed. `crashed` means the worker raised (a bug), caught by the node's
error handler; `no_tool_call` that it answered without calling any of its tools, even once
told to; `unknown_tool` that it called only tools it was not given, `bad_arguments` only
with arguments their schemas refuse. The `model_*` and `provider_*` reasons and
`unknown_model` name a failed model call (`workers.model_errors`); the others are reported
by the worker loop itself."""

CONTRACT_SCHEMA_VERSION = 2
"""The version of `Handoff` and `Report` (2 since the seal, cost and run id fields): a
reader can tell which fields a stored one may lack."""

ReportStatus = Literal["ok", "failed"]
Strategy = Literal["retry", "fallback", "reassign", "escalate", "clarify"]
"""What recovery did about a failed report."""
AnswerStatus = Literal["complete", "partial", "failed"]


class Finding(BaseModel):
    """One fact established by one successful tool call, with the evidence attached."""

    id: str
    """`F1`, `F2`… unique within a report; claims cite it."""
    tool: str
    """The tool call it came from."""
    call_id: str
    """The tool-call id it came from."""
    args: dict[str, Any]
    """The arguments of that call."""
    observation: str
    """The (size-capped) text the tool returned."""
    source: Literal["tool", "fallback"] = "tool"
    """`fallback` when recovery put in a cached substitute instead of a live observation."""


class Handoff(BaseModel):
    """One sub-task for one worker: everything the worker can see, and nothing more."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Stable packet id within a run, e.g. `billing-1`; `depends_on` refers to it."""
    schema_version: int = CONTRACT_SCHEMA_VERSION
    """Which version of this contract wrote it."""
    run_id: str = ""
    """The traced run that dispatched it (its trace's `run_id`), if traced."""
    sender: str = "supervisor"
    """Who wrote the packet."""
    recipient: str
    """The worker that runs it; must be on the roster."""
    objective: str
    """One testable sentence: what the report must establish."""
    inputs: dict[str, str] = Field(default_factory=dict)
    """Resolved facts the worker may use to fill tool arguments (order_id, query, topic…)."""
    tool_allow: tuple[str, ...] = ()
    """Qualified tool names or `server.` prefixes this packet may use."""
    max_steps: int = 3
    """Model turns the worker may take before it fails with reason `budget`."""
    timeout_s: float = 60.0
    """Wall-clock limit for the whole worker run, enforced by the `Send` timeout."""
    return_contract: str = "Report"
    """What the worker must return; always a `Report` here."""
    depends_on: tuple[str, ...] = ()
    """Ids of packets whose reports this packet needs before it can start."""
    attempt: int = 1
    """1 for the first dispatch; recovery re-dispatches with a higher attempt."""
    facts: tuple[Finding, ...] = ()
    """Shared facts the supervisor already resolved through the hub (the order record): the
    worker starts with them as findings instead of fetching them again."""

    def fingerprint(self) -> str:
        """Identity for de-duplication: the same worker asked the same thing with the same
        inputs and tools is the same packet, whatever its id."""
        return short_digest(
            {
                "recipient": self.recipient,
                "objective": self.objective,
                "inputs": self.inputs,
                "tool_allow": sorted(self.tool_allow),
            }
        )


class ToolCallRecord(BaseModel):
    """One tool call a worker made, as the hub saw it."""

    id: str
    """The model's tool-call id."""
    tool: str
    """Qualified tool name, e.g. `orders.find_order`."""
    args: dict[str, Any]
    """Arguments as the model sent them."""
    outcome: str
    """The hub's outcome: ok, not_allowed, unknown_tool, tool_error, timeout, unavailable."""
    duration_ms: float
    """Time spent in the hub for this call."""


class ProposedAction(BaseModel):
    """A side effect a worker asks for; only the graph may execute it, after approval."""

    tool: str
    """Qualified name of the write tool, e.g. `orders.issue_refund`."""
    args: dict[str, Any]
    """The action's arguments (without idempotency key or approval token)."""
    reason: str = ""
    """Why the worker proposes it."""
    proposed_by: str = ""
    """The worker that proposed it."""
    observed_refunded_cents: int | None = None
    """For a refund: the order's refunded total the proposal rests on (its `refund_status`
    observation). `act` re-reads it before executing and refuses when it changed."""
    seal: str = ""
    """An HMAC over the thread, tool, arguments and proposer, set when the report enters the
    state (`graph.action_seal`): `approve` refuses an action whose seal does not hold."""

    def short_digest(self) -> str:
        """The action's identity in its thread, the short digest of its exact tool name and
        arguments: proposals are counted once by it and the idempotency key is made from it.
        Not what a human approves: that is the action digest with the key among the
        arguments (`graph.proposals.approval_digest`)."""
        return short_digest({"tool": self.tool, "args": self.args})


class Report(BaseModel):
    """What a worker returns: a typed outcome, never a transcript."""

    packet_id: str
    """The `Handoff.id` it answers."""
    schema_version: int = CONTRACT_SCHEMA_VERSION
    """Which version of this contract wrote it."""
    run_id: str = ""
    """The traced run whose worker wrote it (its trace's `run_id`), if traced."""
    worker: str
    """The worker that produced it."""
    objective: str
    """The packet's objective, repeated so a report reads on its own."""
    status: ReportStatus
    """ok or failed; edges route on this, never on prose."""
    reason: FailureReason | None = None
    """Why it failed; None when ok."""
    findings: list[Finding] = Field(default_factory=list)
    """Facts, each tied to the tool call and observation it came from."""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    """Every call attempted, including refused and failed ones."""
    note: str = ""
    """The worker's final text (or what went wrong)."""
    conclusion: str = ""
    """What the worker concluded from its findings, in a sentence or two (ok reports)."""
    model: str = ""
    """The provider model that answered its last model turn ("" for Muster's own models)."""
    fallback_for: str = ""
    """The worker's own model when `model` is one of its fallbacks (it was unavailable)."""
    steps_used: int = 0
    """Model turns taken."""
    tokens: int = 0
    """Total tokens from the model's usage metadata."""
    cost_usd: float = 0.0
    """What the run's priced model calls cost, in US dollars (`workers.cost`)."""
    unpriced_calls: int = 0
    """Model calls the price table does not know: their cost is unknown, not zero."""
    duration_ms: float = 0.0
    """Wall-clock time of the worker run."""
    proposed_actions: list[ProposedAction] = Field(default_factory=list)
    """Side effects the worker asks the graph to perform."""
    attempt: int = 1
    """Which dispatch of the packet produced it."""
    fallback: bool = False
    """True when recovery substituted this report (e.g. a cached policy snapshot)."""


class RecoveryRecord(BaseModel):
    """One recovery step: which report failed, what was done, and what came of it."""

    packet_id: str
    """The failed packet."""
    worker: str
    """The worker that failed."""
    attempt: int
    """Which dispatch of the packet failed."""
    reason: FailureReason
    """Why it failed."""
    strategy: Strategy
    """What recovery did."""
    detail: str
    """What replaced the failed work, in words a human can check."""


class ActionRecord(BaseModel):
    """One proposed side effect on its way through approval and execution. The `actions`
    list only grows: a later record for the same digest supersedes an earlier one."""

    digest: str
    """What the approval is bound to: the action digest of the tool and its arguments with
    the idempotency key (`graph.proposals.approval_digest`)."""
    tool: str
    """The write tool."""
    args: dict[str, Any]
    """The action's arguments (without key or token)."""
    idempotency_key: str
    """Derived from the thread and the action, so a replay never repeats the effect."""
    proposed_by: str
    """The worker that proposed it."""
    decision: Literal["approved", "rejected"]
    """What the human decided (a mismatched approval counts as rejected)."""
    decided_by: str
    """Who decided."""
    decided_at: float
    """When (epoch seconds)."""
    expires_at: float
    """When the approval lapses, fixed at decision time; the token carries it."""
    note: str = ""
    """The human's note, or why an approval was refused."""
    status: Literal["approved", "rejected", "executed", "refused", "failed", "held"]
    """Where it stands: executed means the tool ran (or replayed its stored result); held
    means it was not put to a human because the same action waits in another thread."""
    result: str = ""
    """What the tool returned, or why it did not run."""


class Claim(BaseModel):
    """One sentence of what happened, and the evidence it rests on."""

    text: str
    """The sentence, e.g. "R. Okafor was charged $129.00 twice on 2025-03-14."."""
    cites: list[str] = Field(default_factory=list)
    """The findings it rests on, as `packet_id/finding_id` (e.g. `billing-1/F2`)."""


ResolutionKind = Literal["action", "instruction", "open"]


class ResolutionStep(BaseModel):
    """What we will do about one intent: an action awaiting or past approval, an instruction
    for the agent, or an open point that stops the answer being complete."""

    intent: str
    """The intent it resolves (`duplicate_charge`, `cancellation`, ...)."""
    kind: ResolutionKind
    """`action` (an approval-gated tool call), `instruction` (for the agent), or `open`."""
    text: str
    """The step in one or two sentences."""
    tool: str | None = None
    """For an action: the write tool."""
    args: dict[str, Any] = Field(default_factory=dict)
    """For an action: its arguments."""
    approval: str | None = None
    """For an action: `pending approval`, `approved`, `executed`, `rejected`, `refused`..."""
    cites: list[str] = Field(default_factory=list)
    """The findings (order facts, policy) it rests on."""


class Answer(BaseModel):
    """The final answer, honest about what went into it.

    `summary`, `resolution`, `customer_reply` and `open_questions` resolve the ticket;
    `evidence` backs them; `text` renders all of it for a terminal."""

    text: str
    """The reply, with a DEGRADED line whenever anything below is true."""
    status: AnswerStatus
    """complete: every specialist succeeded; partial: some did, or a fallback went in;
    failed: nothing usable came back."""
    degraded: bool
    """True whenever a fallback, a failure or an unverified claim went into the answer."""
    degraded_reasons: list[str] = Field(default_factory=list)
    """Why it is degraded: which specialist failed and what replaced it."""
    needs_human: bool = False
    """True when the ticket must go to a person."""
    stop_reason: str | None = None
    """Which run limit stopped the run early, if any."""
    intents: list[str] = Field(default_factory=list)
    """Every intent the ticket expressed; `complete` only when each has a resolution."""
    summary: list[Claim] = Field(default_factory=list)
    """What happened, a sentence each, every claim citing its evidence."""
    resolution: list[ResolutionStep] = Field(default_factory=list)
    """What we will do, one step per intent (or more)."""
    customer_reply: str = ""
    """A draft reply to the customer, from the KB's wording and the policy that applies."""
    open_questions: list[str] = Field(default_factory=list)
    """What is still open and who must answer it."""
    evidence: list[str] = Field(default_factory=list)
    """The observations behind the answer, readable, one line each, with their citation."""
    written_by: Literal["rules", "model"] = "rules"
    """Who wrote the summary and the reply: composed by code, or a model (then checked)."""


CHECKPOINTED_TYPES: tuple[type[BaseModel], ...] = (
    Claim,
    ResolutionStep,
    Handoff,
    Report,
    Answer,
    Finding,
    ToolCallRecord,
    ProposedAction,
    RecoveryRecord,
    ActionRecord,
)
"""Every contract type that is stored in checkpoints: the msgpack allowlist for the store."""
