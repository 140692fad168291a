"""`muster serve`: Muster's HTTP API (FastAPI under uvicorn), in the process that runs threads.

One process holds one runtime (the checkpoint store, the hub, the models) for its lifetime,
as `muster batch` does, and runs each submitted ticket as a background task under the
thread's lease. Every read goes to the same store `muster threads` and `show` read; every
decision goes through the resume path `muster approve` and `clarify` use
(`graph.app.decisions.approval_decision`, `check_waiting`, `answer_command`), so the CLI and
the API can act on the same threads. docs/service.md describes the endpoints.

- `app`: the routes (`create_app`) and how errors map to HTTP statuses
- `auth`: bearer tokens mapped to approver names (`MUSTER_API_TOKENS`)
- `models`: the request and response bodies (the OpenAPI document's schemas)
- `runs`: the background runs, each under its thread's lease, and their progress
- `views`: a thread as the API shows it (the `--json` payload), and the pending approvals
- `events`: a thread's progress as server-sent events
- `command`: `muster serve`

Nothing here is imported by `muster --help` or the other commands: FastAPI loads only when
`muster serve` runs (`graph.app.commands.cmd_serve`).
"""
