"""The incidents pack: incident triage from logs, metrics and deploys. `plugin.py` names its
parts for the loader (`graph.domains`)."""
