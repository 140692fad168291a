"""The support pack's cached fallback: a dated snapshot of the policy server's policies.

Recovery puts it in when the live policy specialist fails (`graph.fallbacks` says how a
fallback is marked and why it always degrades the answer); the plug-in registers it as the
`policy` worker's fallback.

The policy snapshot is a copy of what the live policy server said, taken through the hub
like any other call, so it never drifts into a policy nobody wrote. Refresh it with
`python -m domains.support.fallbacks` (it rewrites `policy_snapshot.json` with today's date).
"""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path

from graph.fallbacks import Snapshot

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


def load_policy_snapshot(path: Path = SNAPSHOT_FILE) -> Snapshot:
    """The policy snapshot from its file: each entry names its policy id and the date."""
    data = json.loads(path.read_text(encoding="utf-8"))
    taken_on = str(data["taken_on"])
    entries = {
        topic: f"{p['policy_id']} (snapshot {taken_on}): {p['text']}"
        for topic, p in data["policies"].items()
    }
    return Snapshot("cached policy snapshot", taken_on, entries, input_key="topic")


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
