"""Cached fallbacks: dated snapshots recovery may put in when a live specialist fails.

A fallback is always marked as one (`Report.fallback`, `Finding.source == "fallback"`) and
always makes the answer degraded: silently swapping in a cached policy is worse than an error.

The policy snapshot is a copy of what the live policy server said, taken through the hub
like any other call, so it never drifts into a policy nobody wrote. Refresh it with
`python -m graph.fallbacks` (it rewrites `policy_snapshot.json` with today's date).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path

SNAPSHOT_FILE = Path(__file__).resolve().parent / "policy_snapshot.json"
SNAPSHOT_TOPICS = (
    "duplicate_charge",
    "refunds",
    "goodwill_credit",
    "shipping",
    "returns",
    "gift_cards",
    "cancellation",
    "escalation",
)
"""The policy topics the snapshot keeps."""


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


def load_policy_snapshot(path: Path = SNAPSHOT_FILE) -> Snapshot:
    """The policy snapshot from its file: each entry names its policy id and the date."""
    data = json.loads(path.read_text(encoding="utf-8"))
    taken_on = str(data["taken_on"])
    entries = {
        topic: f"{p['policy_id']} (snapshot {taken_on}): {p['text']}"
        for topic, p in data["policies"].items()
    }
    return Snapshot("cached policy snapshot", taken_on, entries, input_key="topic")


FALLBACKS: dict[str, Snapshot] = {"policy": load_policy_snapshot()}
"""Fallback snapshot per worker. A worker without one cannot be replaced by a cache."""


async def refresh_policy_snapshot(path: Path = SNAPSHOT_FILE) -> None:
    """Ask the live policy server for every snapshot topic and write the file."""
    from workers.hub import DEFAULT_SERVERS_FILE, ToolHub, load_servers_config

    config = load_servers_config(DEFAULT_SERVERS_FILE)
    policy_only = config.model_copy(
        update={"mcp_servers": {"policy": config.mcp_servers["policy"]}}
    )
    async with await ToolHub.connect(policy_only) as hub:
        policies = {}
        for topic in SNAPSHOT_TOPICS:
            result = await hub.call("policy.check_policy", {"topic": topic}, ["policy."])
            if not result.ok:
                raise SystemExit(f"policy server: {result.text}")
            policies[topic] = json.loads(result.text)
    payload = {"taken_on": date.today().isoformat(), "policies": policies}
    await asyncio.to_thread(path.write_text, json.dumps(payload, indent=2) + "\n", "utf-8")
    print(f"wrote {len(policies)} policies to {path}")


if __name__ == "__main__":
    asyncio.run(refresh_policy_snapshot())
