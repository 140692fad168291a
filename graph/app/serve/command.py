"""`muster serve`: the HTTP API under uvicorn, until SIGINT or SIGTERM.

Who may call (`MUSTER_ACCOUNTS`, else the tokens file `MUSTER_API_TOKENS`) and the run
options are checked before anything starts (a one-line error, exit 2; without accounts a
line on stderr says identities are not checked); `MUSTER_SERVE_FLEET=1` puts it in front of
the fleet (graph/app/serve/front.py: every run is queued for `muster worker`); uvicorn then serves
`create_app` on the command's own event loop: the runtime opens as the app starts, and on a
signal uvicorn stops taking requests, the runs in flight drain (checkpointed; `muster
resume` continues them) and the servers stop.
"""

from __future__ import annotations

import argparse
import sys

from graph.app.command_run import run_options
from graph.app.options import ExitCode
from graph.app.serve.auth import load_authenticator
from graph.app.serve.front import FLEET_ENV, fleet_setting

GRACEFUL_SHUTDOWN_S = 5
"""How long open requests (an event stream) may take to end once a stop was asked."""


async def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn  # only `muster serve` loads the server and FastAPI

    from graph.app.serve.app import create_app

    auth = load_authenticator()
    options = run_options(args)
    on_fleet = fleet_setting()
    app = create_app(options, auth, fleet=on_fleet)  # a fleet on SQLite: a ConfigError
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        lifespan="on",
        ws="none",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        log_level="info",
    )
    runs = (
        f"in front of the fleet (${FLEET_ENV}): tickets, follow-ups and decisions are queued "
        "for `muster worker`"
        if on_fleet
        else "tickets run in this process"
    )
    print(
        f"muster serve: http://{args.host}:{args.port} over {options.db} "
        f"(callers: {auth.describe()}); {runs}; OpenAPI at /openapi.json"
        + ("; the inbox at /inbox" if auth.sessions else ""),
        flush=True,
    )
    if notice := auth.local_notice():
        print(notice, file=sys.stderr, flush=True)
    server = uvicorn.Server(config)
    await server.serve()
    if not server.started:
        print("muster: error: the server did not start (see above)", file=sys.stderr)
        return ExitCode.BAD_INPUT
    return ExitCode.OK
