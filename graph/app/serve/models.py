"""The API's request and response bodies: what the OpenAPI document describes.

A thread's body (`ThreadDetail`) is the payload of `muster run --json` (and `approve`,
`clarify`, `resume`), field for field, with the thread's status, actions and audit added;
fields the CLI's payload gains later pass through (`extra="allow"`). Request bodies refuse
fields they do not declare: a decision carrying `"by"` is a 422, since who decides is the
bearer token's approver (graph/app/serve/auth.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Problem(BaseModel):
    """Why a request was refused, in one line."""

    detail: str
    """What is wrong and what to do, as the CLI would say it."""
    check: str | None = None
    """For a refused decision: which check refused it (`approver`, `digest_format`,
    `digest`, `edit`, `role`, `decided`), or `csrf` for a session's write without its CSRF
    token, else null."""


class TicketIn(BaseModel):
    """A ticket to run on a new thread (as `muster run`)."""

    model_config = ConfigDict(extra="forbid")

    request: str = Field(description="the ticket text, as the customer wrote it")
    thread_id: str | None = Field(
        default=None,
        description="the thread id to use (must be new); default: a fresh t-<hex> id",
    )


class MessageIn(BaseModel):
    """The customer's next message on a thread that has answered (as `muster follow-up`)."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(description="the customer's new message, as they wrote it")


class ThreadAccepted(BaseModel):
    """A run (or a resume) was accepted and runs in the background."""

    thread_id: str
    accepted: str
    """What runs now: `run`, `approval`, `clarification`, `cancel`, `follow-up`."""
    by: str | None = None
    """The approver (the authenticated account, or the token's) for a decision or a
    cancellation."""
    resume: Any = None
    """The resume value the thread was answered with, for a decision."""
    queued_on_fleet: bool = False
    """Queued for the fleet's workers, not run by this server: a decision on a thread the
    fleet runs, or any write of a server in front of the fleet (`MUSTER_SERVE_FLEET`)."""
    job_id: int | None = None
    """The fleet's job that will run it (`muster fleet` shows it), when queued."""
    detail_url: str
    """Where the thread reads (`GET`)."""
    events_url: str
    """Its progress as server-sent events."""


class ThreadSummary(BaseModel):
    """One line of `muster threads --json`."""

    thread_id: str
    status: str
    """done, interrupted, failed, in progress or new."""
    updated_at: str
    request: str
    """The first 60 characters of the ticket."""
    answer_status: str | None
    waiting_on: list[str]
    """What the thread waits for: `approval`, `clarification`, `paused`."""
    stopped_by: str | None = None
    """The signal that stopped a thread in progress cleanly, if one did."""
    running_here: bool = False
    """This server is running it now."""


class PendingApproval(BaseModel):
    """An action waiting for a decision (as in `muster run --json`)."""

    model_config = ConfigDict(extra="allow")

    kind: Literal["approval"] = "approval"
    tool: str
    args: dict[str, Any]
    digest: str
    """What a decision is bound to; give it (or 8+ of its first hex characters) back."""
    reason: str = ""
    proposed_by: str = ""


class PendingQuestion(BaseModel):
    """A question a worker asked the human (as in `muster run --json`)."""

    model_config = ConfigDict(extra="allow")

    kind: Literal["clarification"] = "clarification"
    worker: str | None = None
    packet_id: str | None = None
    question: str | None = None


class AuditEntry(BaseModel):
    """One row of the thread's audit log: decisions, refusals, executions, cancellations."""

    at: float
    event: str
    actor: str
    role: str
    digest: str
    result: str


class ThreadDetail(BaseModel):
    """A thread: the payload of `muster run --json` at its latest stop, plus its status,
    actions and audit."""

    model_config = ConfigDict(extra="allow")

    thread_id: str
    thread_status: str
    """done, interrupted, failed, in progress or new (as `muster threads`)."""
    updated_at: str
    request: str
    running_here: bool
    """This server is running it now: what is below is its last checkpoint."""
    waiting_for_human: bool
    status: str | None
    """The answer's status (complete, partial, failed), final or so far."""
    degraded: bool | None
    needs_human: bool
    pending_approvals: list[PendingApproval]
    pending_questions: list[PendingQuestion]
    answer: dict[str, Any] | None
    """The answer (`workers.contracts.Answer`): final, or the one it would give now."""
    answer_is_final: bool
    totals: dict[str, Any]
    reading: dict[str, Any]
    reports: list[dict[str, Any]]
    recoveries: list[dict[str, Any]]
    actions: list[dict[str, Any]]
    """Every action record (`workers.contracts.ActionRecord`): decided, executed, refused."""
    audit: list[AuditEntry]


class EditableArg(BaseModel):
    """An argument an approver may lower when approving (the approvers file's `edits`)."""

    arg: str
    at_least: int
    at_most: int
    """The proposed value: an edit never goes above it."""
    rule: str


class ApprovalItem(BaseModel):
    """A decision waiting across the store's threads, with what a person needs to make it."""

    thread_id: str
    request: str
    tool: str
    args: dict[str, Any]
    digest: str
    reason: str
    proposed_by: str
    needs_role: str | None = None
    """The role the policy limits ask for, when the action is over one."""
    limits: list[str] = Field(default_factory=list)
    """The policy limits the action is over (`POL-REF-001: Refunds above $500 ...`)."""
    policy: list[str]
    """The policy the action rests on, as the evidence quotes it."""
    evidence: list[str]
    """The observations the action rests on, one line each with its citation."""
    draft_reply: str
    """The reply to the customer as it stands while the action waits."""
    refused_before: list[str] = Field(default_factory=list)
    """Why earlier answers to this approval were refused by the graph, if any were."""
    editable: list[EditableArg] = Field(default_factory=list)
    """The arguments an approval may change, with their bounds."""
    decide_url: str


class DecisionIn(BaseModel):
    """A human's answer to a thread that waits: approve or reject its pending action, or
    respond to its clarifying question. Who decides is the authenticated caller."""

    model_config = ConfigDict(extra="forbid")

    decision: Literal["approve", "reject", "respond"]
    digest: str | None = Field(
        default=None,
        description="the pending approval's digest (or its first 8+ hex characters): the "
        "decision is refused if it names another action",
    )
    note: str | None = Field(default=None, description="why, for the audit log")
    answer: str | None = Field(default=None, description="the reply to a clarifying question")
    args: dict[str, Any] | None = Field(
        default=None,
        description="approve with these arguments instead of the proposed ones: the same "
        "arguments, only those the approvers file's `edits` allow changed, within their "
        "bounds (a partial refund); the role limits are checked on what will run",
    )


class CancelIn(BaseModel):
    """End a thread cleanly (as `muster cancel`): nothing more runs, the answer says so."""

    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(default=None, description="why, for the audit log and answer")


class ThreadDeleted(BaseModel):
    """A thread's data removed (as `muster delete`): checkpoints, writes, trace and lease;
    its audit rows kept with their results redacted."""

    thread_id: str
    audit_rows_redacted: int


class PurgeIn(BaseModel):
    """Remove every thread not updated for a while (as `muster purge --older-than DAYS`)."""

    model_config = ConfigDict(extra="forbid")

    older_than_days: float = Field(ge=0, description="threads not updated in this many days")


class Purged(BaseModel):
    """What a purge removed, and what it left because another process was running it."""

    deleted: list[str]
    busy: list[str]
    kept: int
