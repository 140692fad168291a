"""The routes of `muster serve` (`create_app`), and how Muster's errors become statuses.

Who calls (graph/app/serve/auth.py): with accounts (`MUSTER_ACCOUNTS`), an API token of an
account (`Authorization: Bearer`) or a browser session (a cookie, and for every write its
CSRF token in `X-CSRF-Token`); without, a token of the tokens file. Every route but the
login page needs one of them: none, an unknown token or an expired session is a 401 (an
inbox page sends the browser to `/login` instead), a session's write without its CSRF token
a 403. Errors say what the CLI would say, in `{"detail": ..., "check": ...}`: an unknown
thread is 404; a thread that waits for no such answer, is busy (another run holds its
lease), already exists, or a decision whose digest names another action or that another
decision already stands on, 409; an approver who may not decide (unknown, or without the
role a policy limit needs), 403; a malformed ticket, thread id, digest or body, or an edit
outside the policy's bounds, 422. Swagger's pages are off: they load their scripts from a
CDN, and this server fetches nothing.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Query, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse

from checkpoints.lease import ThreadBusyError
from checkpoints.threads import thread_exists
from graph.app import retention
from graph.app.command_run import UnknownThreadError
from graph.app.commands import FollowUpRefused
from graph.app.decisions import DecisionRefused
from graph.app.options import MusterOptions
from graph.app.pending import NothingPendingError
from graph.app.runtime import MusterRuntime, open_runtime, stopped_by
from graph.app.serve import actions, inbox
from graph.app.serve.accounts import Identity
from graph.app.serve.auth import (
    ApiTokens,
    Authenticator,
    CsrfRefused,
    LoginThrottle,
    authenticate,
)
from graph.app.serve.events import thread_events
from graph.app.serve.front import fleet_setting, fleet_url, open_front
from graph.app.serve.models import (
    ApprovalItem,
    CancelIn,
    DecisionIn,
    MessageIn,
    Problem,
    Purged,
    PurgeIn,
    ThreadAccepted,
    ThreadDeleted,
    ThreadDetail,
    ThreadSummary,
    TicketIn,
)
from graph.app.serve.runs import ThreadRuns
from graph.app.serve.views import pending_decisions, thread_detail
from graph.app.thread_filters import since_time, thread_status
from workers.errors import ConfigError, MusterError

API_VERSION = "0.2.0"

MAX_PAGE = 500
"""The most threads one `GET /threads` returns (`limit`)."""

REFUSALS: dict[int | str, dict[str, Any]] = {
    status: {"model": Problem} for status in (401, 403, 404, 409, 422)
}
"""The error statuses every route documents."""

DECISION_STATUS = {
    "approver": 403,
    "role": 403,
    "digest_format": 422,
    "edit": 422,
    "digest": 409,
    "decided": 409,
}
"""The status of a decision refused by each of `muster approve`'s checks."""


Caller = Annotated[Identity, Depends(authenticate)]


def runs_of(request: Request) -> ThreadRuns:
    runs: ThreadRuns = request.app.state.runs
    return runs


Runs = Annotated[ThreadRuns, Depends(runs_of)]


async def existing(runs: ThreadRuns, thread_id: str) -> None:
    """404 unless the store holds `thread_id` (or, in front of the fleet, it is queued
    there: a ticket no worker has started yet reads as `new`)."""
    if await thread_exists(runs.runtime.saver, thread_id):
        return
    if runs.fleet is None or not await runs.fleet.queued(thread_id):
        raise actions.unknown(thread_id)


router = APIRouter(dependencies=[Depends(authenticate)], responses=REFUSALS)


@router.post("/threads", status_code=202, response_model=ThreadAccepted, tags=["threads"])
async def submit_ticket(ticket: TicketIn, runs: Runs) -> ThreadAccepted:
    """Run a ticket on a new thread in the background (as `muster run`); returns its id at
    once. In front of the fleet (`MUSTER_SERVE_FLEET`) it is queued for `muster worker`
    instead, as `muster submit` queues it (`queued_on_fleet`, `job_id`). Follow it with
    `GET /threads/{id}` or `/events`."""
    return await actions.submit(runs, ticket)


@router.get("/threads", response_model=list[ThreadSummary], tags=["threads"])
async def list_threads(
    runs: Runs,
    response: Response,
    status: Annotated[list[str] | None, Query(description="done, interrupted, ...")] = None,
    since: Annotated[str | None, Query(description="ISO date or time, or 90s, 2h, 7d")] = None,
    until: Annotated[str | None, Query(description="ISO date or time, or an age")] = None,
    q: Annotated[str | None, Query(description="words the ticket (or id) contains")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE, description="at most this many")] = 100,
    offset: Annotated[int, Query(ge=0, description="skip this many first")] = 0,
) -> list[dict[str, Any]]:
    """The store's threads, most recently updated first (as `muster threads --json`),
    searched by status, time and subject, a page at a time (`X-Total-Count`: how many match)."""
    try:
        statuses = [thread_status(s) for s in status or []]
        after = since_time(since) if since else None
        before = since_time(until) if until else None
    except argparse.ArgumentTypeError as error:
        raise ConfigError(str(error)) from None
    await runs.index.refresh()
    chosen = runs.index.select(status=statuses, since=after, until=before, subject=q)
    response.headers["X-Total-Count"] = str(len(chosen))
    return [
        {
            **entry.summary(),
            "stopped_by": stopped_by(entry.thread_id) if entry.status == "in progress" else None,
            "running_here": runs.running(entry.thread_id),
        }
        for entry in chosen[offset : offset + limit]
    ]


@router.get("/threads/{thread_id}", response_model=ThreadDetail, tags=["threads"])
async def read_thread(thread_id: str, runs: Runs) -> dict[str, Any]:
    """The thread at its latest checkpoint: the answer (final, or so far), reports, actions,
    pending approvals and questions, audit (the payload of `muster run --json`, and more)."""
    await existing(runs, thread_id)
    return await thread_detail(runs.runtime, thread_id, running=runs.running(thread_id))


@router.get(
    "/threads/{thread_id}/events",
    response_class=StreamingResponse,
    tags=["threads"],
    responses={
        200: {
            "content": {"text/event-stream": {}},
            "description": "status, progress and answer events",
        }
    },
)
async def thread_progress(thread_id: str, runs: Runs) -> StreamingResponse:
    """Server-sent events: `status` when it changes, `progress` while this server runs it,
    `answer` when it is done (then the stream ends)."""
    await existing(runs, thread_id)
    return StreamingResponse(
        thread_events(runs, thread_id),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.get("/approvals", response_model=list[ApprovalItem], tags=["decisions"])
async def list_approvals(
    runs: Runs,
    response: Response,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE, description="threads per page")] = 100,
    offset: Annotated[int, Query(ge=0, description="skip this many threads first")] = 0,
) -> list[dict[str, Any]]:
    """The actions waiting for a decision, across threads (most recently updated first, a
    page of threads at a time; `X-Total-Count`: how many threads wait), with their evidence,
    digest, policy, draft reply and the arguments an approval may edit."""
    await runs.index.refresh()
    waiting = [e.thread_id for e in runs.index.select() if "approval" in e.waiting_on]
    response.headers["X-Total-Count"] = str(len(waiting))
    return await pending_decisions(runs.runtime, waiting[offset : offset + limit])


@router.post(
    "/threads/{thread_id}/decisions",
    status_code=202,
    response_model=ThreadAccepted,
    tags=["decisions"],
)
async def decide(thread_id: str, body: DecisionIn, by: Caller, runs: Runs) -> ThreadAccepted:
    """Approve (as proposed, or with edited arguments within the policy's bounds) or reject
    the pending action, or respond to the pending question; the decider is the
    authenticated caller, held to their roles. The checks of `muster approve` are made
    before the response (a refused decision runs nothing); the thread then continues in the
    background."""
    return await actions.decide(runs, thread_id, body, by)


@router.post(
    "/threads/{thread_id}/messages",
    status_code=202,
    response_model=ThreadAccepted,
    tags=["threads"],
)
async def post_message(thread_id: str, body: MessageIn, runs: Runs) -> ThreadAccepted:
    """The customer's next message on a thread that has answered: a new turn on the same
    thread (as `muster follow-up`), read with the earlier messages, answer and actions. A
    thread that is running, waits for a human or has not finished refuses it (409, the
    `reject` double-texting strategy: nothing runs or is queued). In front of the fleet the
    new turn is queued for `muster worker` (`queued_on_fleet`, `job_id`)."""
    return await actions.follow_up(runs, thread_id, body)


@router.post(
    "/threads/{thread_id}/cancel", status_code=202, response_model=ThreadAccepted, tags=["threads"]
)
async def cancel_thread(
    thread_id: str, by: Caller, runs: Runs, body: CancelIn | None = None
) -> ThreadAccepted:
    """End the thread cleanly (as `muster cancel`): nothing more runs; its answer says so."""
    return await actions.cancel(runs, thread_id, body or CancelIn(), by)


@router.delete("/threads/{thread_id}", response_model=ThreadDeleted, tags=["retention"])
async def delete_thread_data(thread_id: str, by: Caller, runs: Runs) -> ThreadDeleted:
    """Remove the thread's data (as `muster delete`): checkpoints, pending writes, trace and
    lease; its audit rows stay with their results redacted. A running thread is refused
    (409), an unknown one is 404."""
    store = runs.runtime.store
    try:
        redacted = await retention.delete_thread(store, thread_id)
    except KeyError:
        raise actions.unknown(thread_id) from None
    await actions.record_caller(runs, thread_id, by, "delete", None)
    await runs.index.touch(thread_id)  # gone from the lists at once
    return ThreadDeleted(thread_id=thread_id, audit_rows_redacted=redacted)


@router.post("/purge", response_model=Purged, tags=["retention"])
async def purge_threads(body: PurgeIn, by: Caller, runs: Runs) -> Purged:
    """Remove every thread not updated in `older_than_days` (as `muster purge`); a thread
    another process is running is left for next time and listed as busy."""
    deleted, busy, held = await retention.purge_threads(runs.runtime.store, body.older_than_days)
    for thread_id in deleted:
        await actions.record_caller(runs, thread_id, by, "purge", None)
        await runs.index.touch(thread_id)
    return Purged(deleted=deleted, busy=busy, kept=held - len(deleted))


def status_for(error: MusterError) -> tuple[int, str | None]:
    """The HTTP status for one of Muster's errors, and the decision check it names."""
    if isinstance(error, DecisionRefused):
        return DECISION_STATUS[error.check], error.check
    if isinstance(error, CsrfRefused):
        return 403, "csrf"
    if isinstance(error, UnknownThreadError):
        return 404, None
    if isinstance(error, actions.ForbiddenError):
        return 403, None
    if isinstance(
        error,
        NothingPendingError | ThreadBusyError | actions.ThreadExistsError | FollowUpRefused,
    ):
        return 409, None
    if isinstance(error, ConfigError):
        return 422, None
    return 422, None


async def muster_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, MusterError)
    status, check = status_for(error)
    return JSONResponse(Problem(detail=str(error), check=check).model_dump(), status_code=status)


def create_app(
    options: MusterOptions,
    auth: Authenticator | ApiTokens,
    *,
    runtime: MusterRuntime | None = None,
    login_throttle: LoginThrottle | None = None,
    fleet: bool | None = None,
) -> FastAPI:
    """The API over `options`' store: its runtime opens when the app starts (or `runtime`,
    already open, is used) and every run in flight drains when it stops. With accounts
    (`auth.sessions`), the inbox and its login page are served too (logins counted by
    `login_throttle`, a default one if not given), and the OpenAPI document needs a login
    like everything else. `fleet` (default: `MUSTER_SERVE_FLEET`): in front of the fleet,
    every run is queued for `muster worker` (graph/app/serve/front.py), none runs here."""
    if isinstance(auth, ApiTokens):
        auth = Authenticator(tokens=auth)

    on_fleet = fleet_setting() if fleet is None else fleet
    url = fleet_url(options.db) if on_fleet else None  # a SQLite store: a ConfigError now

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            opened = runtime
            if opened is None:
                opened = await stack.enter_async_context(open_runtime(options))
            front = await stack.enter_async_context(open_front(url)) if url else None
            app.state.runs = ThreadRuns(opened, front)
            try:
                yield
            finally:
                await app.state.runs.drain()

    app = FastAPI(
        title="Muster",
        version=API_VERSION,
        summary="Submit tickets, read threads, decide on pending actions (docs/service.md).",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None if auth.sessions else "/openapi.json",
    )
    app.state.auth = auth
    app.state.login_throttle = login_throttle or LoginThrottle()
    app.include_router(router)
    if auth.sessions:
        app.include_router(inbox.router)
        app.include_router(inbox.login_router)

        @app.get("/openapi.json", include_in_schema=False, dependencies=[Depends(authenticate)])
        async def openapi_document() -> JSONResponse:
            return JSONResponse(app.openapi())

    app.add_exception_handler(MusterError, muster_error)
    return app
