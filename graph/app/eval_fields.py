"""What `muster eval DATASET` compares: a request's labels, what Muster did, and each field.

The fields themselves belong to the domain pack: its plug-in's `EVAL_FIELDS` (support's
`domains/support/scoring.py`) is a `LabelledFields`: the labels model a dataset line is
validated with, `read_outcome` (what Muster did, read from a thread's state), the scored
`FIELDS` and their `TARGETS`. This module is the generic part: reading the dataset,
comparing and printing one field, and the honest-status check. All of it is pure: no
servers, no pydantic-evals.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from pydantic import BaseModel, ValidationError

from graph.app.jsonl import read_objects
from graph.domains import DomainPack
from graph.trace import THREAD_ID
from workers.contracts import canonical_json
from workers.errors import ConfigError

HONEST_STATUS = "honest_status"
"""The assertion that the answer is not `complete` while an intent is unaddressed (target:
no such request)."""

Scored = BaseModel
"""Either side of a comparison: a pack's labels, or its outcome with the same fields."""


class LabelledFields(Protocol):
    """A pack's labelled fields (its plug-in's `EVAL_FIELDS`, usually a module of it).

    Outcomes carry `status`, `open_intents` and `error` besides the fields; labels carry
    `status`. A field holding actions is a list of models with `tool` and `args`."""

    FIELDS: tuple[str, ...]
    """The scored fields, in table order."""
    TARGETS: Mapping[str, float]
    """The share of requests each field must get right; fields without one have none."""
    LABELS_DOC: str
    """The file a malformed labels line is sent to."""
    Labels: type[BaseModel]
    """A dataset line's `labels`."""
    EVAL_DATABASES: tuple[str, ...]
    """The environment variables naming databases the pack's servers write: an eval points
    each at a fresh file."""
    EVAL_ENV: Mapping[str, str]
    """Environment pinned for an eval run (what the labels assume, e.g. the data's date)."""

    def read_outcome(
        self,
        values: Mapping[str, Any],
        *,
        thread_id: str,
        waiting_for: list[str],
        error: str | None = None,
    ) -> BaseModel:
        """What Muster did, from a thread's state values (paused, finished or crashed)."""


def labelled_fields(pack: DomainPack) -> LabelledFields:
    """The pack's `EVAL_FIELDS`; a `ConfigError` when it has none."""
    fields = pack.hook("EVAL_FIELDS")
    if fields is None:
        raise ConfigError(
            f"domain {pack.name} scores no labelled fields: give its plugin.py EVAL_FIELDS "
            "(or score() and TARGETS for `muster eval --domain`)"
        )
    return cast(LabelledFields, fields)


class Measure(Protocol):
    """One of a pack's own measures over a whole eval (its `EVAL_FIELDS.MEASURES` returns
    them), printed beside the fields."""

    @property
    def name(self) -> str:
        """What is measured, e.g. "no-human answers right on every field"."""
    @property
    def shown(self) -> str:
        """The measured value as printed ("37/38 = 97.4%", "0")."""
    @property
    def target(self) -> str:
        """The target as printed ("98%", "0", "within 10 points"), or "-"."""
    @property
    def met(self) -> bool | None:
        """Whether the target is met; None without a target."""


class EvalFileError(ConfigError):
    """The eval file is missing or malformed; the message names the file and the line."""


@dataclass(frozen=True)
class EvalTicket:
    """One line of the eval file."""

    id: str
    request: str
    labels: Scored
    line: int
    language: str | None = None
    """The line's `language` (`en`, `fr`, ...), when the dataset names one."""


def load_eval_tickets(path: Path, fields: LabelledFields) -> list[EvalTicket]:
    """Read and validate an eval file against the pack's labels; an `EvalFileError` names
    the file and the line."""
    tickets: list[EvalTicket] = []
    seen: dict[str, int] = {}
    shape = '{"id", "request", "labels"}'
    for number, where, data in read_objects(path, what="eval", error=EvalFileError, shape=shape):
        ticket_id, request = data.get("id"), data.get("request")
        if not isinstance(ticket_id, str) or not THREAD_ID.match(ticket_id):
            raise EvalFileError(f"{where}: id must be a plain name (letters, digits, . _ -)")
        if ticket_id in seen:
            raise EvalFileError(
                f"{where}: id {ticket_id!r} is already used on line "
                f"{seen[ticket_id]}; give each ticket its own id"
            )
        if not isinstance(request, str) or not request.strip():
            raise EvalFileError(f"{where}: request must be non-empty text")
        try:
            labels = fields.Labels.model_validate(data.get("labels"))
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "labels"
            raise EvalFileError(
                f"{where}: labels.{field}: {first['msg']} ({fields.LABELS_DOC} has the format)"
            ) from None
        seen[ticket_id] = number
        language = data.get("language")
        tickets.append(
            EvalTicket(
                ticket_id, request, labels, number, str(language) if language else None
            )
        )
    if not tickets:
        raise EvalFileError(f"eval file {path} has no tickets")
    return tickets


def _is_action(item: object) -> bool:
    return isinstance(item, BaseModel) and hasattr(item, "tool") and hasattr(item, "args")


def _key(labels: Scored, field: str) -> object:
    """The comparable form of one field: a set for the set-valued ones, actions as
    (tool, args)."""
    value = getattr(labels, field)
    if isinstance(value, list):
        return {(a.tool, canonical_json(a.args)) if _is_action(a) else a for a in value}
    return value


def field_matches(got: Scored, expected: Scored, field: str) -> bool:
    """Whether Muster got `field` right (sets compare as sets; actions as (tool, args))."""
    return _key(got, field) == _key(expected, field)


def show_field(labels: Scored, field: str) -> str:
    """One field as the miss table prints it."""
    value = getattr(labels, field)
    if isinstance(value, list) and any(_is_action(a) for a in value):
        shown = [
            f"{a.tool}({', '.join(f'{k}={v}' for k, v in sorted(a.args.items()))})"
            for a in value
        ]
        return "; ".join(shown)
    if isinstance(value, list):
        return ", ".join(sorted(value)) or "(none)"
    return "(none)" if value is None else str(value).lower() if isinstance(value, bool) else value


def run_error(outcome: Scored) -> str | None:
    """Why the run behind an outcome raised, if it did."""
    error = getattr(outcome, "error", None)
    return str(error) if error else None


def complete_while_unaddressed(got: Scored, expected: Scored) -> bool:
    """Muster said `complete` while an intent is unaddressed: its own answer has an open
    resolution step, or the labels say the request can only be partial."""
    return getattr(got, "status", None) == "complete" and (
        bool(getattr(got, "open_intents", None)) or getattr(expected, "status", None) == "partial"
    )
