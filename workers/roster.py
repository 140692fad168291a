"""The roster: which specialists exist and the most each may ever be granted.

The roster is data (`roster.json`, or a file named by `MUSTER_ROSTER`), so granting a new MCP
server's tools to a worker is a configuration change. Plans are validated against it: a packet
may narrow a worker's privileges, never widen them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from workers.errors import RosterError
from workers.hub import is_valid_entry

DEFAULT_ROSTER_FILE = Path(__file__).resolve().parents[1] / "domains" / "support" / "roster.json"
"""The default domain's roster (support's; read as data: workers never import a pack)."""


class WorkerSpec(BaseModel):
    """One specialist and the ceiling of what it may touch."""

    name: str
    """The worker's name; `Handoff.recipient` refers to it."""
    description: str
    """One sentence that goes into the worker's instructions."""
    privileges: tuple[str, ...] = ()
    """Allowlist entries (exact names or `server.` prefixes): the most a packet may grant."""
    capabilities: tuple[str, ...] = ()
    """What the worker can stand in for when another fails (used to reassign work)."""
    needs: tuple[str, ...] = ()
    """Shared facts the supervisor resolves once and attaches to this worker's packets
    (`order_record`)."""
    proposes: tuple[str, ...] = ()
    """Write tools this worker may *propose* (never call); the graph runs them after approval."""
    max_steps: int = Field(default=3, ge=1, le=20)
    """Default model-turn budget for this worker's packets."""


class SharedFact(BaseModel):
    """A fact the supervisor resolves once, through one read tool, for every packet whose
    worker `needs` it (the order record, an incident's error summary)."""

    tool: str
    """The one read tool the supervisor may call for it (qualified name)."""
    args: dict[str, str] = Field(default_factory=dict)
    """Tool argument -> the packet input that supplies it."""


class Roster(BaseModel):
    """All specialists, by name."""

    workers: dict[str, WorkerSpec]
    """Worker specs keyed by name."""
    shared_facts: dict[str, SharedFact] = Field(default_factory=dict)
    """Shared facts by the name roster entries list under `needs` (besides `order_record`,
    which the supervisor knows)."""
    domain: str = "support"
    """The domain pack this roster belongs to (its name, or its folder for a pack loaded
    from elsewhere): the stages ask the pack for its rules (graph/domains.py)."""

    def get(self, name: str) -> WorkerSpec | None:
        """The spec for `name`, or None when no such worker exists."""
        return self.workers.get(name)


def load_roster(path: Path | None = None) -> Roster:
    """Read and validate a roster file (default: `MUSTER_ROSTER`, else the shipped one)."""
    path = path or Path(os.environ.get("MUSTER_ROSTER") or DEFAULT_ROSTER_FILE)
    try:
        raw = json.loads(path.read_text())
        for name, spec in raw.get("workers", {}).items():
            spec.setdefault("name", name)
        roster = Roster.model_validate(raw)
    except FileNotFoundError:
        raise RosterError(f"roster file {path} does not exist") from None
    except (json.JSONDecodeError, ValidationError, AttributeError) as error:
        first = str(error).splitlines()[0]
        raise RosterError(f"roster file {path} is malformed: {first}") from None
    for spec in roster.workers.values():
        bad = [entry for entry in spec.privileges if not is_valid_entry(entry)]
        if bad:
            raise RosterError(
                f"roster file {path}: worker {spec.name!r} has invalid privileges {bad}"
            )
    return roster
