"""The routes of `muster serve` (`create_app`), and how Muster's errors become statuses.

Every route but `/openapi.json` needs a bearer token (graph/app/serve/auth.py): none or an
unknown one is a 401. Errors say what the CLI would say, in `{"detail": ..., "check": ...}`:
an unknown thread is 404; a thread that waits for no such answer, is busy (another run holds
its lease), already exists, or a decision whose digest names another action or that another
decision already stands on, 409; an approver who may not decide (unknown, or without the
role a policy limit needs), 403; a malformed ticket, thread id, digest or body, 422.
Swagger's pages are off: they load their scripts from a CDN, and this server fetches nothing.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from checkpoints.lease import ThreadBusyError
from checkpoints.threads import describe_threads, thread_exists
from graph.app.commands import DecisionRefused, NothingPendingError, UnknownThreadError
from graph.app.options import MusterOptions
from graph.app.runtime import MusterRuntime, open_runtime, stopped_by
from graph.app.serve import actions
from graph.app.serve.auth import ApiTokens
from graph.app.serve.events import thread_events
from graph.app.serve.models import (
    ApprovalItem,
    CancelIn,
    DecisionIn,
    Problem,
    ThreadAccepted,
    ThreadDetail,
    ThreadSummary,
    TicketIn,
)
from graph.app.serve.runs import ThreadRuns
from graph.app.serve.views import pending_decisions, thread_detail
from graph.app.thread_filters import select_threads, since_time, thread_status
from workers.errors import ConfigError, MusterError

API_VERSION = "0.1.0"

_bearer = HTTPBearer(auto_error=False, description="a token of $MUSTER_API_TOKENS")

REFUSALS: dict[int | str, dict[str, Any]] = {
    status: {"model": Problem} for status in (401, 403, 404, 409, 422)
}
"""The error statuses every route documents."""

DECISION_STATUS = {
    "approver": 403,
    "role": 403,
    "digest_format": 422,
    "digest": 409,
    "decided": 409,
}
"""The status of a decision refused by each of `muster approve`'s checks."""


def approver(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> str:
    """The approver the request's bearer token speaks for; 401 without a valid one."""
    tokens: ApiTokens = request.app.state.tokens
    name = tokens.approver(credentials.credentials) if credentials is not None else None
    if name is None:
        raise HTTPException(
            status_code=401,
            detail="give a valid token: Authorization: Bearer <token of $MUSTER_API_TOKENS>",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return name


Approver = Annotated[str, Depends(approver)]


def runs_of(request: Request) -> ThreadRuns:
    runs: ThreadRuns = request.app.state.runs
    return runs


Runs = Annotated[ThreadRuns, Depends(runs_of)]


async def existing(runs: ThreadRuns, thread_id: str) -> None:
    """404 unless the store holds `thread_id`."""
    if not await thread_exists(runs.runtime.saver, thread_id):
        raise actions.unknown(thread_id)


router = APIRouter(dependencies=[Depends(approver)], responses=REFUSALS)


@router.post("/threads", status_code=202, response_model=ThreadAccepted, tags=["threads"])
async def submit_ticket(ticket: TicketIn, runs: Runs) -> ThreadAccepted:
    """Run a ticket on a new thread in the background (as `muster run`); returns its id at
    once. Follow it with `GET /threads/{id}` or `/events`."""
    return await actions.submit(runs, ticket)


@router.get("/threads", response_model=list[ThreadSummary], tags=["threads"])
async def list_threads(
    runs: Runs,
    status: Annotated[list[str] | None, Query(description="done, interrupted, ...")] = None,
    since: Annotated[str | None, Query(description="ISO date or time, or 90s, 2h, 7d")] = None,
) -> list[dict[str, Any]]:
    """The store's threads, most recently updated first (as `muster threads --json`)."""
    try:
        statuses = [thread_status(s) for s in status or []]
        after = since_time(since) if since else None
    except argparse.ArgumentTypeError as error:
        raise ConfigError(str(error)) from None
    infos = await describe_threads(runs.runtime.graph, runs.runtime.saver)
    return [
        {
            **info.__dict__,
            "stopped_by": stopped_by(info.thread_id) if info.status == "in progress" else None,
            "running_here": runs.running(info.thread_id),
        }
        for info in select_threads(infos, status=statuses, since=after)
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
async def list_approvals(runs: Runs) -> list[dict[str, Any]]:
    """Every action waiting for a decision, across threads, with its evidence, digest,
    policy and draft reply."""
    return await pending_decisions(runs.runtime)


@router.post(
    "/threads/{thread_id}/decisions",
    status_code=202,
    response_model=ThreadAccepted,
    tags=["decisions"],
)
async def decide(thread_id: str, body: DecisionIn, by: Approver, runs: Runs) -> ThreadAccepted:
    """Approve or reject the pending action, or respond to the pending question; the
    decider is the token's approver. The checks of `muster approve` are made before the
    response (a refused decision runs nothing); the thread then continues in the background."""
    return await actions.decide(runs, thread_id, body, by)


@router.post(
    "/threads/{thread_id}/cancel", status_code=202, response_model=ThreadAccepted, tags=["threads"]
)
async def cancel_thread(
    thread_id: str, by: Approver, runs: Runs, body: CancelIn | None = None
) -> ThreadAccepted:
    """End the thread cleanly (as `muster cancel`): nothing more runs; its answer says so."""
    return await actions.cancel(runs, thread_id, body or CancelIn(), by)


def status_for(error: MusterError) -> tuple[int, str | None]:
    """The HTTP status for one of Muster's errors, and the decision check it names."""
    if isinstance(error, DecisionRefused):
        return DECISION_STATUS[error.check], error.check
    if isinstance(error, UnknownThreadError):
        return 404, None
    if isinstance(error, actions.ForbiddenError):
        return 403, None
    if isinstance(error, NothingPendingError | ThreadBusyError | actions.ThreadExistsError):
        return 409, None
    if isinstance(error, ConfigError):
        return 422, None
    return 422, None


async def muster_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, MusterError)
    status, check = status_for(error)
    return JSONResponse(Problem(detail=str(error), check=check).model_dump(), status_code=status)


def create_app(
    options: MusterOptions, tokens: ApiTokens, *, runtime: MusterRuntime | None = None
) -> FastAPI:
    """The API over `options`' store: its runtime opens when the app starts (or `runtime`,
    already open, is used) and every run in flight drains when it stops."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if runtime is not None:
            app.state.runs = ThreadRuns(runtime)
            try:
                yield
            finally:
                await app.state.runs.drain()
            return
        async with open_runtime(options) as opened:
            app.state.runs = ThreadRuns(opened)
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
    )
    app.state.tokens = tokens
    app.include_router(router)
    app.add_exception_handler(MusterError, muster_error)
    return app
