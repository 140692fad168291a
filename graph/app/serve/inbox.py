"""The web inbox (served with accounts only): its login page, its pages and their files.

Everything is shipped in the package (graph/app/serve/static/) and served by this process:
no CDN, no fetch from outside (the pages' Content-Security-Policy allows this origin only).
The inbox is one page driven by the JSON API with the browser's session cookie; every write
carries the session's CSRF token (a synchronizer token, in a `<meta>` of the page) in
`X-CSRF-Token`. The login form is protected by a double-submit token: a cookie and a hidden
field that must match, so another site cannot log a browser in under its own account.

- `GET /login`, `POST /login`: the only routes that need no login; repeated wrong passwords
  are refused for a while (429, `LoginThrottle` in graph/app/serve/auth.py)
- `GET /inbox`: the page; `GET /inbox/static/{file}`: its script and style sheet
- `GET /inbox/threads/{id}/timeline`: the thread's timeline page (`muster show --html`)
- `GET /session`: who is logged in; `POST /logout`
"""

from __future__ import annotations

import asyncio
import hmac
import html
import secrets
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.security import HTTPAuthorizationCredentials

from checkpoints.threads import thread_config, thread_exists
from graph.app.serve.accounts import SESSION_TTL_S, Identity
from graph.app.serve.auth import (
    SESSION_COOKIE,
    LoginThrottle,
    authenticate,
    retry_after,
    session_of,
)

STATIC = Path(__file__).resolve().parent / "static"
LOGIN_CSRF_COOKIE = "muster_login_csrf"
FILES = {"inbox.js": "text/javascript", "inbox.css": "text/css"}
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
)
LOGIN_CSP = CSP.replace("style-src 'self'", "style-src 'unsafe-inline'")
"""The login page carries its style sheet inline: no other file may be served unauthenticated."""
HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}


def _page_caller(request: Request) -> Identity:
    """The logged-in caller of a page (or a bearer token's); a browser without a live
    session goes to `/login`."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    credentials = (
        HTTPAuthorizationCredentials(scheme=scheme, credentials=token.strip())
        if scheme.lower() == "bearer" and token.strip()
        else None
    )
    try:
        return authenticate(request, credentials, request.cookies.get(SESSION_COOKIE))
    except HTTPException as error:
        if error.status_code == 401 and credentials is None:
            raise HTTPException(status_code=303, headers={"Location": "/login"}) from None
        raise


Page = Annotated[Identity, Depends(_page_caller)]

router = APIRouter(tags=["inbox"], include_in_schema=False)
login_router = APIRouter(tags=["inbox"], include_in_schema=False)


def _read(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


@router.get("/")
async def home(caller: Page) -> RedirectResponse:
    return RedirectResponse("/inbox", status_code=303)


@router.get("/inbox")
async def inbox_page(request: Request, caller: Page) -> HTMLResponse:
    """The inbox, with the caller's name, roles and session CSRF token filled in."""
    found = session_of(request, request.cookies.get(SESSION_COOKIE))
    csrf = found[1] if found is not None else ""
    page = (
        _read("inbox.html")
        .replace("{{csrf}}", html.escape(csrf))
        .replace("{{name}}", html.escape(caller.name))
        .replace("{{roles}}", html.escape(", ".join(caller.roles)))
    )
    return HTMLResponse(page, headers={"Content-Security-Policy": CSP, **HEADERS})


@router.get("/inbox/static/{name}")
async def inbox_file(name: str, caller: Page) -> Response:
    if name not in FILES:
        raise HTTPException(status_code=404, detail=f"no file {name}")
    return Response(_read(name), media_type=FILES[name], headers=HEADERS)


@router.get("/inbox/threads/{thread_id}/timeline")
async def timeline_page(thread_id: str, request: Request, caller: Page) -> HTMLResponse:
    """The thread's timeline as `muster show THREAD --html` draws it."""
    from graph.app.timeline_build import thread_timeline
    from graph.app.timeline_html import timeline_html

    runtime = request.app.state.runs.runtime
    if not await thread_exists(runtime.saver, thread_id):
        raise HTTPException(status_code=404, detail=f"unknown thread {thread_id}")
    config = thread_config(thread_id)
    snapshot = await runtime.graph.aget_state(config)
    history = [s async for s in runtime.graph.aget_state_history(config)]
    page = timeline_html(thread_timeline(thread_id, snapshot, history))
    return HTMLResponse(page, headers=HEADERS)


@router.get("/session")
async def who(caller: Page) -> dict[str, Any]:
    """The logged-in account."""
    return {"name": caller.name, "roles": list(caller.roles), "via": caller.via}


@router.post("/logout")
async def logout(request: Request, caller: Page) -> Response:
    """End the session (a write: it needs the CSRF token too)."""
    session = request.cookies.get(SESSION_COOKIE)
    if session:
        request.app.state.auth.accounts.end_session(session)
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


def _login_page(message: str = "", *, status: int = 200, name: str = "") -> HTMLResponse:
    token = secrets.token_urlsafe(32)
    alert = f'<p class="alert" role="alert">{html.escape(message)}</p>' if message else ""
    page = (
        _read("login.html")
        .replace("{{style}}", _read("inbox.css"))
        .replace("{{csrf}}", token)
        .replace("{{alert}}", alert)
        .replace("{{name}}", html.escape(name))
    )
    response = HTMLResponse(
        page, status_code=status, headers={"Content-Security-Policy": LOGIN_CSP, **HEADERS}
    )
    response.set_cookie(
        LOGIN_CSRF_COOKIE, token, httponly=True, samesite="strict", path="/login", max_age=3600
    )
    return response


@login_router.get("/login")
async def login_form() -> HTMLResponse:
    return _login_page()


@login_router.post("/login")
async def login(request: Request) -> Response:
    """Check the form's double-submit token, then the login throttle (429 after repeated
    failures), then the password (scrypt, off the loop); a session cookie (HttpOnly,
    SameSite=Strict) and a redirect to the inbox on success."""
    form = {k: v[0] for k, v in parse_qs((await request.body()).decode(errors="replace")).items()}
    cookie = request.cookies.get(LOGIN_CSRF_COOKIE, "")
    given = form.get("csrf", "")
    if not cookie or not hmac.compare_digest(cookie.encode(), given.encode()):
        return _login_page(
            "The login form expired or did not come from this server; try again.", status=403
        )
    name, password = form.get("name", "").strip(), form.get("password", "")
    address = request.client.host if request.client is not None else "unknown"
    throttle: LoginThrottle = request.app.state.login_throttle
    wait_s = throttle.attempt(name, address)
    if wait_s > 0:
        refused = _login_page(
            f"Too many failed logins; try again in {retry_after(wait_s)} s.", status=429, name=name
        )
        refused.headers["Retry-After"] = retry_after(wait_s)
        return refused
    accounts = request.app.state.auth.accounts
    identity = await asyncio.to_thread(accounts.login, name, password) if name else None
    if identity is None:
        return _login_page("Wrong name or password.", status=401, name=name)
    throttle.succeeded(name, address)
    session, _csrf = accounts.new_session(identity)
    response = RedirectResponse("/inbox", status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        session,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
        max_age=int(SESSION_TTL_S),
    )
    response.delete_cookie(LOGIN_CSRF_COOKIE, path="/login")
    return response
