"""`muster threads --status S --since WHEN`: which threads to list.

`--status` takes a status as `muster threads` shows it (`done`, `interrupted`, `failed`,
`in progress`, `new`; `in-progress` and `waiting` are read as `in progress` and
`interrupted`), and may be given more than once. `--since` takes an ISO date or time
(`2026-11-30`, `2026-11-30T14:00`, taken as UTC without a zone) or an age (`90s`, `30m`,
`2h`, `7d`): threads updated at or after it are listed.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from checkpoints.threads import ThreadInfo

STATUSES = ("done", "interrupted", "failed", "in progress", "new")
"""What `muster threads` shows in its STATUS column."""
_ALIASES = {"in-progress": "in progress", "in_progress": "in progress", "waiting": "interrupted"}
_AGE = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd])")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def thread_status(text: str) -> str:
    """argparse type for `--status`: one of `STATUSES` (or an alias)."""
    status = _ALIASES.get(text.strip().lower(), text.strip().lower())
    if status not in STATUSES:
        raise argparse.ArgumentTypeError(
            f"unknown status {text!r}; one of: {', '.join(STATUSES)} (or in-progress, waiting)"
        )
    return status


def since_time(text: str, *, now: datetime | None = None) -> datetime:
    """argparse type for `--since`: an ISO date or time (UTC if no zone), or an age such as
    `30m`, `2h`, `7d` counted back from now."""
    now = now or datetime.now(UTC)
    if match := _AGE.fullmatch(text.strip().lower()):
        return now - timedelta(seconds=float(match[1]) * _UNIT_S[match[2]])
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--since {text!r}: give an ISO date or time (2026-11-30, 2026-11-30T14:00) "
            "or an age (90s, 30m, 2h, 7d)"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _updated(info: ThreadInfo) -> datetime | None:
    try:
        when = datetime.fromisoformat(info.updated_at)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def select_threads(
    infos: Sequence[ThreadInfo],
    *,
    status: Sequence[str] | None = None,
    since: datetime | None = None,
) -> list[ThreadInfo]:
    """The threads with one of `status` (any, if none given) updated at or after `since`."""
    chosen = []
    for info in infos:
        if status and info.status not in status:
            continue
        if since is not None and ((updated := _updated(info)) is None or updated < since):
            continue
        chosen.append(info)
    return chosen
