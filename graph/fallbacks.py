"""Cached fallbacks: dated snapshots recovery may put in when a live specialist fails.

A fallback is always marked as one (`Report.fallback`, `Finding.source == "fallback"`) and
always makes the answer degraded: silently swapping in a cached policy is worse than an error.
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


POLICY_SNAPSHOT = Snapshot(
    name="cached policy snapshot",
    taken_on="2026-10-01",
    input_key="topic",
    entries={
        "duplicate_charge": (
            "POL-DUP-2 (snapshot 2026-10-01): a duplicate charge confirmed on the order is "
            "refunded in full to the original payment method. Duplicate authorisations that "
            "were never captured are released by the bank and need no refund."
        ),
        "refunds": (
            "POL-REF-1 (snapshot 2026-10-01): refunds go to the original payment method within "
            "5-10 business days of approval; amounts above $500 need a supervisor."
        ),
        "goodwill_credit": (
            "POL-GW-1 (snapshot 2026-10-01): agents may offer a goodwill credit of up to $20 "
            "when a customer was inconvenienced by our error."
        ),
        "shipping": (
            "POL-SHP-3 (snapshot 2026-10-01): orders delayed beyond 7 business days qualify for "
            "a shipping refund on request."
        ),
        "returns": (
            "POL-RET-1 (snapshot 2026-10-01): unused items may be returned within 30 days."
        ),
        "gift_cards": (
            "POL-GC-1 (snapshot 2026-10-01): gift cards are non-refundable and never expire."
        ),
        "cancellation": (
            "POL-CAN-1 (snapshot 2026-10-01): orders can be cancelled free of charge until they "
            "ship."
        ),
    },
)

FALLBACKS: dict[str, Snapshot] = {"policy": POLICY_SNAPSHOT}
"""Fallback snapshot per worker. A worker without one cannot be replaced by a cache."""
