"""Cached fallbacks: dated snapshots recovery may put in when a live specialist fails.

A fallback is always marked as one (`Report.fallback`, `Finding.source == "fallback"`) and
always makes the answer degraded: silently swapping in a cached policy is worse than an error.

The snapshots themselves belong to the domain packs (a plug-in's `FALLBACKS`, registered here
when `graph.domains` loads the pack; support's policy snapshot is
`domains/support/fallbacks.py`); recovery only looks them up.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Snapshot:
    """A dated copy of what a specialist would have looked up."""

    name: str
    """What it is, as the answer names it."""
    taken_on: str
    """The date it was taken (YYYY-MM-DD); the answer states it."""
    entries: dict[str, str]
    """Text by input value (for policy: by topic)."""
    input_key: str
    """Which packet input selects the entry."""

    def lookup(self, inputs: dict[str, str]) -> str | None:
        """The cached text for a packet's inputs, if the snapshot has it."""
        return self.entries.get(inputs.get(self.input_key, ""))


FALLBACKS: dict[str, Snapshot] = {}
"""Fallback snapshot per worker, from the loaded packs. A worker without one cannot be
replaced by a cache."""
