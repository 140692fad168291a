"""When a request arrived (`InputState.received_at`): its one written form, ISO 8601 with an
offset, parsed in one place for every entry point (`muster run --received-at`, batch and eval
lines) and for the packs that read it. Standard library only: the CLI's parser imports it
before LangGraph loads."""

from __future__ import annotations

from datetime import datetime


def parse_received_at(text: str) -> datetime:
    """`text` as an aware datetime; a `ValueError` saying the form for one that is not ISO
    8601 with an offset (callers turn it into their own clear error)."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"received time {text!r} is not ISO 8601 (e.g. 2025-06-12T14:07:00Z)"
        ) from None
    if moment.tzinfo is None:
        raise ValueError(f"received time {text!r} has no offset: write Z or +HH:MM")
    return moment
