"""What the API's writes do: submit a ticket, decide on a thread, cancel one.

Each runs in the background through `ThreadRuns.start`, which returns once the checks made
under the thread's lease have passed. A decision makes `muster approve`'s checks in its
order (`approval_decision`: approver, digest format now; digest, role, standing decision
against the pending approval), and resumes through the functions `approve` and `clarify`
use (`check_waiting`, `answer_command`); a fleet's thread is queued for a fleet worker as
the CLI queues it (`graph.app.fleet.queue_decision`). A cancellation is `muster cancel`'s
steps. In front of the fleet (`runs.fleet`, graph/app/serve/front.py) nothing runs here:
each write makes the same checks, under the thread's lease where the in-process path takes
it, then queues a job for `muster worker` and answers with its id.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from checkpoints.threads import status_of, thread_config, thread_exists
from graph.app.command_run import UnknownThreadError
from graph.app.commands import FollowUpRefused, follow_up_problem
from graph.app.control import write_cancellation
from graph.app.decisions import answer_command, approval_decision, check_waiting
from graph.app.options import check_ticket
from graph.app.pending import NothingPendingError
from graph.app.serve.accounts import Identity
from graph.app.serve.auth import TOKENS_ENV
from graph.app.serve.models import CancelIn, DecisionIn, MessageIn, ThreadAccepted, TicketIn
from graph.app.serve.runs import Payload, ThreadRuns
from graph.approvers import APPROVERS_ENV, approvers_path, load_approvers
from graph.trace import THREAD_ID
from workers.errors import ConfigError, MusterError

log = logging.getLogger("muster.serve")


class ThreadExistsError(MusterError):
    """A new thread was asked for with an id the store already holds (409)."""


class ForbiddenError(MusterError):
    """The token's approver may not do this (403)."""


def unknown(thread_id: str) -> UnknownThreadError:
    return UnknownThreadError(f"unknown thread {thread_id}; GET /threads lists them")


def accepted(thread_id: str, what: str, **fields: Any) -> ThreadAccepted:
    return ThreadAccepted(
        thread_id=thread_id,
        accepted=what,
        detail_url=f"/threads/{thread_id}",
        events_url=f"/threads/{thread_id}/events",
        **fields,
    )


async def submit(runs: ThreadRuns, ticket: TicketIn) -> ThreadAccepted:
    """Run a ticket on a new thread (as `muster run`)."""
    request = check_ticket(ticket.request)  # `run`'s own check: blank or too long is a 422
    thread_id = ticket.thread_id or f"t-{uuid.uuid4().hex[:12]}"
    if not THREAD_ID.match(thread_id):
        raise ConfigError(
            f"thread_id {thread_id!r}: use letters, digits, '.', '_' and '-' (at most 128)"
        )

    async def prepare() -> tuple[Payload, Any]:
        if await thread_exists(runs.runtime.saver, thread_id):
            status = status_of(await runs.runtime.graph.aget_state(thread_config(thread_id)))
            raise ThreadExistsError(
                f"thread {thread_id} already exists ({status}); submit without thread_id "
                "for a new one"
            )
        return {"request": request}, None

    if runs.fleet is not None:
        from graph.app.fleet_queue import AlreadyQueued, enqueue_ticket

        await prepare()  # as `muster submit`: a thread in the store already is refused
        try:
            job_id = await enqueue_ticket(runs.fleet.app, thread_id, request)
        except AlreadyQueued:
            raise ThreadExistsError(
                f"thread {thread_id} is queued on the fleet already; submit without "
                "thread_id for a new one"
            ) from None
        log.info("thread %s: ticket queued for the fleet as job %s", thread_id, job_id)
        return accepted(thread_id, "run", queued_on_fleet=True, job_id=job_id)
    await runs.start(thread_id, prepare, must_exist=False)
    return accepted(thread_id, "run")


async def follow_up(runs: ThreadRuns, thread_id: str, body: MessageIn) -> ThreadAccepted:
    """Start a new turn on a thread that has answered with the customer's next message (as
    `muster follow-up`). Double-texting is rejected: a thread this or another process runs
    is busy (its lease), one that waits for a human or has not finished is refused
    (`follow_up_problem`); both are a 409 and nothing runs or is queued."""
    message = check_ticket(body.message)  # `run`'s own check: blank or too long is a 422

    async def prepare() -> tuple[Payload, Any]:
        graph = runs.runtime.graph
        if not await thread_exists(runs.runtime.saver, thread_id):
            raise unknown(thread_id)
        snapshot = await graph.aget_state(thread_config(thread_id))
        where = f"GET /threads/{thread_id}"
        problem = follow_up_problem(
            thread_id, snapshot, show=where, resume=f"`muster resume {thread_id}`"
        )
        if problem:
            raise FollowUpRefused(problem)
        return {"request": message}, {"message": len(snapshot.values.get("contacts") or [0]) + 1}

    if runs.fleet is not None:
        from graph.app.fleet_queue import AlreadyQueued, enqueue_follow_up

        # Checked under the lease, as in-process: a thread a worker runs now is busy (409).
        async with runs.runtime.store.hold_thread(thread_id, must_exist=True):
            _payload, told = await prepare()
            try:
                job_id = await enqueue_follow_up(
                    runs.fleet.app, thread_id, message, contact=told["message"]
                )
            except AlreadyQueued:
                raise FollowUpRefused(
                    f"a follow-up message for thread {thread_id} is queued on the fleet "
                    "already; send this one once it is answered"
                ) from None
        log.info("thread %s: follow-up queued for the fleet as job %s", thread_id, job_id)
        return accepted(thread_id, "follow-up", resume=told, queued_on_fleet=True, job_id=job_id)
    told = await runs.start(thread_id, prepare, must_exist=True)
    return accepted(thread_id, "follow-up", resume=told)


AUTHENTICATED = "authenticated"
"""The audit event of a decision's caller: who, under which roles, proved how."""


async def record_caller(
    runs: ThreadRuns, thread_id: str, caller: Identity, kind: str, resume: Any
) -> None:
    """Audit who answered the thread, as the server authenticated them (their account,
    roles and how they proved it: a session, an API token's id), beside the decision the
    graph records under the same name."""
    audit = runs.runtime.services.audit
    if audit is None:
        return
    digest = str(resume.get("digest", "")) if isinstance(resume, dict) else ""
    await audit.record(
        thread_id=thread_id,
        event=AUTHENTICATED,
        actor=caller.name,
        role=",".join(caller.roles),
        digest=digest,
        result={"via": caller.via, "answers": kind},
    )


async def decide(
    runs: ThreadRuns, thread_id: str, body: DecisionIn, caller: Identity
) -> ThreadAccepted:
    """Answer the thread's pending approval (approve, reject) or question (respond), as
    `muster approve` and `muster clarify` do, with `caller` the authenticated decider: an
    account's roles are held to the approvers file's limits as well as the file's own, and
    edited arguments (`body.args`) to its `edits`."""
    by = caller.name
    where = f"GET /threads/{thread_id} shows it"
    value: Any
    if body.decision == "respond":
        if not (body.answer or "").strip():
            raise ConfigError('"respond" needs an "answer": the reply to the question')
        if problem := load_approvers().unknown_approver(by):
            raise ForbiddenError(f"the caller {problem}")
        kind, value = "clarification", body.answer
    else:
        kind = "approval"
        value = approval_decision(
            thread=thread_id,
            by=by,
            approved=body.decision == "approve",
            note=body.note or "",
            digest=body.digest,
            db=runs.runtime.db,
            show=f"GET /threads/{thread_id}",
            by_source="the caller",
            digest_source="digest",
            fix_approver=f"give the account an approver of {approvers_path()}, or map the "
            f"token to one in ${TOKENS_ENV}",
            roles=caller.roles or None,
            args=body.args if body.decision == "approve" else None,
        )
    from graph.app.fleet import queue_decision  # lazy, as in the CLI: Procrastinate

    # A thread the fleet has run is answered through its queue; in front of the fleet, any.
    queued = await queue_decision(
        runs.runtime.db, thread_id, kind, value, always=runs.fleet is not None
    )
    if queued is not None:
        await record_caller(runs, thread_id, caller, kind, queued.resume)
        log.info("thread %s: %s queued for the fleet as job %s", thread_id, kind, queued.job_id)
        return accepted(
            thread_id,
            kind,
            by=by,
            resume=queued.resume,
            queued_on_fleet=True,
            job_id=queued.job_id,
        )

    async def prepare() -> tuple[Payload, Any]:
        graph, saver = runs.runtime.graph, runs.runtime.saver
        await check_waiting(graph, saver, thread_id, kind, unknown=unknown(thread_id))
        command, resume = await answer_command(graph, thread_id, kind, value, where=where)
        await record_caller(runs, thread_id, caller, kind, resume)
        return command, resume

    resume = await runs.start(thread_id, prepare, must_exist=True)
    return accepted(thread_id, kind, by=by, resume=resume)


async def cancel(
    runs: ThreadRuns, thread_id: str, body: CancelIn, caller: Identity
) -> ThreadAccepted:
    """End the thread cleanly (as `muster cancel`): the cancellation is audited, `act` is
    written as having stopped the run, and the graph's own routing writes the answer."""
    by = caller.name
    if problem := load_approvers().unknown_approver(by):
        raise ForbiddenError(
            f"the token's approver {problem}; map it to an approver in ${TOKENS_ENV}, or "
            f"add it to {approvers_path()} (${APPROVERS_ENV} names another file)"
        )
    runtime = runs.runtime

    async def prepare() -> tuple[Payload, Any]:
        if not await thread_exists(runtime.saver, thread_id):
            raise unknown(thread_id)
        if status_of(await runtime.graph.aget_state(thread_config(thread_id))) == "done":
            raise NothingPendingError(f"thread {thread_id} is already done; nothing to cancel")
        reason = await write_cancellation(
            runtime.graph, runtime.store, thread_id, by=by, why=body.reason
        )
        await record_caller(runs, thread_id, caller, "cancel", None)
        return None, reason

    if runs.fleet is not None:  # written here; a worker routes the thread to its answer
        from graph.app.fleet_queue import AlreadyQueued, enqueue_resume

        async with runtime.store.hold_thread(thread_id, must_exist=True):
            _payload, told = await prepare()
            try:
                job_id: int | None = await enqueue_resume(runs.fleet.app, thread_id, None)
            except AlreadyQueued:  # the job waiting continues the thread past the cancel
                job_id = None
        log.info("thread %s: cancelled; queued for the fleet to finish", thread_id)
        return accepted(
            thread_id, "cancel", by=by, resume=told, queued_on_fleet=True, job_id=job_id
        )
    told = await runs.start(thread_id, prepare, must_exist=True)
    return accepted(thread_id, "cancel", by=by, resume=told)
