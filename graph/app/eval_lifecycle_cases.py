"""The lifecycle eval's cases: the label format (each pack's LABELS.md, "Lifecycle cases"), the
file's reader, and what driving one records."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from graph.app.jsonl import read_objects
from graph.domains import DomainPack
from graph.trace import THREAD_ID
from workers.contracts import Answer
from workers.errors import ConfigError

APPROVER = "lead"
"""Who decides, unless a decision names another (`by`): the demo approver with every role."""
LABELS_DOC = "the pack's LABELS.md (Lifecycle cases)"
"""Where a malformed case line is sent."""


class LabelledDecision(BaseModel):
    """How one proposed action is answered."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    """The arguments that identify it: each given one must equal the proposal's."""
    decision: Literal["approve", "reject"]
    by: str = APPROVER
    note: str = ""
    outcome: Literal["executed", "rejected", "held"] | None = None
    """The action's final status; default: executed when approved, rejected when rejected."""

    def matches(self, tool: str, args: Mapping[str, Any]) -> bool:
        return tool == self.tool and all(
            str(args.get(key)) == str(value) for key, value in self.args.items()
        )

    @property
    def expected(self) -> str:
        return self.outcome or ("executed" if self.decision == "approve" else "rejected")


class LabelledAnswers(BaseModel):
    """How the case's stops are answered."""

    model_config = ConfigDict(extra="forbid")

    approvals: list[LabelledDecision] = Field(default_factory=list)
    clarifications: list[str] = Field(default_factory=list)
    """Replies to the clarification questions, in the order they are asked."""


class FinalLabels(BaseModel):
    """What the thread's end looks like."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["complete", "partial", "failed"]
    needs_human: bool
    data: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    """Per table, the rows the thread adds, with the columns that matter (a row updated in
    place, such as an order's status, is listed as it is after)."""
    answer_says: list[str] = Field(default_factory=list)
    answer_lacks: list[str] = Field(default_factory=list)


class CaseLabels(BaseModel):
    """A lifecycle case line, past its id and request."""

    model_config = ConfigDict(extra="ignore")

    answers: LabelledAnswers = Field(default_factory=LabelledAnswers)
    final: FinalLabels


@dataclass(frozen=True)
class LifecycleCase:
    """One line of a lifecycle file."""

    id: str
    request: str
    answers: LabelledAnswers
    final: FinalLabels


@dataclass
class Drive:
    """What happened at each stop of one case."""

    stops: list[str] = field(default_factory=list)
    """Each stop as answered: `approve orders.issue_refund(order_id=12345, ...)`, ..."""
    unexpected: list[str] = field(default_factory=list)
    """Stops no label answered."""
    unused: list[str] = field(default_factory=list)
    """Labelled answers no stop asked for."""
    finished: bool = False
    error: str | None = None


@dataclass
class LifecycleResult:
    """One case's scores: per field (right, expected, got)."""

    id: str
    fields: dict[str, tuple[bool, str, str]]
    drive: Drive
    answer: Answer | None = None


def load_lifecycle_cases(path: Path) -> list[LifecycleCase]:
    """Read and validate a lifecycle file; a `ConfigError` names the file and the line."""
    cases: list[LifecycleCase] = []
    seen: set[str] = set()
    shape = '{"id", "request", "answers", "final"}'
    for _, where, data in read_objects(path, what="lifecycle", error=ConfigError, shape=shape):
        case_id, request = data.get("id"), data.get("request")
        if not isinstance(case_id, str) or not THREAD_ID.match(case_id):
            raise ConfigError(f"{where}: id must be a plain name (letters, digits, . _ -)")
        if case_id in seen:
            raise ConfigError(f"{where}: id {case_id!r} is used twice")
        if not isinstance(request, str) or not request.strip():
            raise ConfigError(f"{where}: request must be non-empty text")
        try:
            labels = CaseLabels.model_validate(data)
        except ValidationError as error:
            first = error.errors()[0]
            at = ".".join(str(part) for part in first["loc"])
            raise ConfigError(f"{where}: {at}: {first['msg']} ({LABELS_DOC})") from None
        seen.add(case_id)
        cases.append(LifecycleCase(case_id, request, labels.answers, labels.final))
    if not cases:
        raise ConfigError(f"lifecycle file {path} has no cases")
    return cases


def default_lifecycle_file(pack: DomainPack) -> Path:
    """The pack's lifecycle cases: `eval.lifecycle` in its domain.json, else
    `lifecycle/cases.jsonl` in its folder."""
    path = pack.eval_files.get("lifecycle") or pack.folder / "lifecycle" / "cases.jsonl"
    if not path.is_file():
        raise ConfigError(f"domain {pack.name} has no lifecycle cases ({path})")
    return path
