"""The application shell: how people run the supervisor graph.

`runtime` builds what a run needs (the hub, the store, the services) for every entry point:
the CLI (`cli`), the batch runner (`batch`), Studio (`studio`) and the notebook. Nothing in
the supervisor (`graph/*.py`) imports from here.
"""
