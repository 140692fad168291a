"""The application shell: how people run the supervisor graph.

`runtime` builds what a run needs (the hub, the audit log, the services, the store) for every
entry point: the CLI (`cli`, printing through `render`), the batch runner (`batch`, with
`batch_tickets`, `batch_outcomes`, `batch_queue` and `batch_report`), Studio (`studio`) and
the notebook. `options` holds the one options object and the exit codes; `signals` the
SIGINT/SIGTERM drain. Nothing in the supervisor (`graph/*.py`) imports from here.
"""
