"""`muster serve`: the HTTP API under uvicorn, until SIGINT or SIGTERM.

Who may call (`MUSTER_ACCOUNTS`, else the tokens file `MUSTER_API_TOKENS`) and the run
options are checked before anything starts (a one-line error, exit 2); uvicorn then serves
`create_app` on the command's own event loop: the runtime opens as the app starts, and on a
signal uvicorn stops taking requests, the runs in flight drain (checkpointed; `muster
resume` continues them) and the servers stop.
"""

from __future__ import annotations

import argparse
import sys

from graph.app.commands import _run_options
from graph.app.options import ExitCode
from graph.app.serve.auth import load_authenticator

GRACEFUL_SHUTDOWN_S = 5
"""How long open requests (an event stream) may take to end once a stop was asked."""


async def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn  # only `muster serve` loads the server and FastAPI

    from graph.app.serve.app import create_app

    auth = load_authenticator()
    options = _run_options(args)
    app = create_app(options, auth)
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        lifespan="on",
        ws="none",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        log_level="info",
    )
    print(
        f"muster serve: http://{args.host}:{args.port} over {options.db} "
        f"(callers: {auth.describe()}); OpenAPI at /openapi.json"
        + ("; the inbox at /inbox" if auth.sessions else ""),
        flush=True,
    )
    server = uvicorn.Server(config)
    await server.serve()
    if not server.started:
        print("muster: error: the server did not start (see above)", file=sys.stderr)
        return ExitCode.BAD_INPUT
    return ExitCode.OK
