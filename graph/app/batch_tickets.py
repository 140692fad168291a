"""The tickets file of `muster batch`, and the thread each ticket runs on.

Each line of the tickets file is `{"id": "...", "request": "..."}`; blank lines are skipped, a
numeric id is read as text, and anything else is refused with the file and the line, as is a
request `muster run` would refuse (`graph.app.options.ticket_problem`: blank, or over its
20,000 characters), so `batch` and `submit` take what `run` takes. Every
ticket runs on its own thread, `batch-<file stem>-<ticket id>` (docs/architecture.md
principle 7: a clean context per job, and an id a later `--resume` can find again).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from graph.app.jsonl import read_objects
from graph.app.options import ticket_problem
from graph.received import parse_received_at
from workers.errors import ConfigError

TICKET_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
"""Ticket ids become part of a thread id and of a trace file name: no paths, no spaces."""


class TicketsFileError(ConfigError):
    """The tickets file is missing or malformed; the message names the file and the line."""


@dataclass(frozen=True)
class Ticket:
    """One line of the tickets file."""

    id: str
    request: str
    line: int
    received_at: str | None = None
    """When it arrived (`received_at`, or the field its pack names: incidents' `paged_at`),
    passed to the run as `InputState.received_at`."""

    def payload(self) -> dict[str, str]:
        """The run's input (`graph.state.InputState`)."""
        return {
            "request": self.request,
            **({"received_at": self.received_at} if self.received_at else {}),
        }


def load_tickets(path: Path, received_field: str = "received_at") -> list[Ticket]:
    """Read and validate a tickets file; a `TicketsFileError` names the file and the line.
    A line's arrival time is its `received_at`, else its `received_field` (the pack's)."""
    tickets: list[Ticket] = []
    first_line: dict[str, int] = {}
    shape = '{"id": ..., "request": ...}'
    for number, where, data in read_objects(
        path, what="tickets", error=TicketsFileError, shape=shape
    ):
        ticket_id = data.get("id")
        if isinstance(ticket_id, int) and not isinstance(ticket_id, bool):
            ticket_id = str(ticket_id)
        if not isinstance(ticket_id, str) or not TICKET_ID.fullmatch(ticket_id):
            raise TicketsFileError(
                f'{where}: "id" must be 1-64 letters, digits, ".", "_" or "-" '
                f"(got {json.dumps(data.get('id'))})"
            )
        request = data.get("request")
        if not isinstance(request, str) or not request.strip():
            raise TicketsFileError(f'{where}: "request" must be a non-empty string')
        if (problem := ticket_problem(request)) is not None:
            raise TicketsFileError(f"{where}: ticket {ticket_id}: {problem}")
        if ticket_id in first_line:
            raise TicketsFileError(
                f'{where}: duplicate id "{ticket_id}" (first on line {first_line[ticket_id]})'
            )
        first_line[ticket_id] = number
        received = data.get("received_at") or data.get(received_field)
        if received is not None:
            try:
                parse_received_at(str(received))
            except ValueError as error:
                raise TicketsFileError(f"{where}: ticket {ticket_id}: {error}") from None
        tickets.append(
            Ticket(
                id=ticket_id,
                request=request,
                line=number,
                received_at=str(received) if received is not None else None,
            )
        )
    if not tickets:
        raise TicketsFileError(f"tickets file {path} has no tickets")
    return tickets


def batch_name(path: Path) -> str:
    """The batch's name, from the file stem, safe inside a thread id."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", path.stem).strip("-") or "tickets"


def batch_thread_id(path: Path, ticket_id: str) -> str:
    """The deterministic thread id of one ticket of one batch file."""
    return f"batch-{batch_name(path)}-{ticket_id}"
