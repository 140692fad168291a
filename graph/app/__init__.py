"""The application shell: how people run the supervisor graph.

`runtime` builds what a run needs (the hub, the audit log, the services, the store) for every
entry point: the CLI (`cli`, the cheap entry point with the parser from `flags`, then
`commands`, printing through `render`; `hints` writes the commands it suggests, with the
options in force), the batch runner (`batch`, with `batch_tickets`, `batch_outcomes`,
`batch_queue` and `batch_report`), Studio (`studio`) and the notebook. `options` holds the one
options object (the exit codes live in `flags`, re-exported there); `signals` the
SIGINT/SIGTERM drain. Nothing in the supervisor (`graph/*.py`) imports from here.
"""
