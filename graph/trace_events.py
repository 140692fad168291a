"""Names of run trace events shared by the trace's writer (graph/trace.py) and its readers."""

from __future__ import annotations

RECORDING_EVENT = "recording"
"""The event for one of the supervisor's own calls, kept for `muster replay`: a hub call
(`tool`, `args`, `outcome`, `result`), or with `kind: "model"` a model call (the LLM
planner's, the answer writer's) in a worker turn's format. A worker's calls are recorded on
their `worker_step` events (`args`, `result`, `request`, `response`)."""
