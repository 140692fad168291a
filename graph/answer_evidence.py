"""An answer's evidence: each finding one cited line, its tool's words quoted as data."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from graph.answer_render import summarize_text
from graph.facts import SHARED_CALL_PREFIX
from graph.state import MusterState
from workers.contracts import Finding, Report

Describe = Callable[[str, dict[str, Any]], str | None]
"""A pack's reading of a tool's JSON object result (the tool named without its server): one
line of what it shows, or None for the generic summary (support's `describe_observation`)."""


def evidence_line(cite: str, finding: Finding, *, describe: Describe | None = None) -> str:
    """One readable line of evidence: what was looked up, and what it said, marked as data
    quoted from the tool (`[tool data] «…»`), on one line, so text a tool returns (an order
    note, a KB article) never reads as part of the answer or as an instruction."""
    args = ", ".join(f"{k}={v}" for k, v in finding.args.items())
    try:
        data: Any = json.loads(finding.observation)
    except json.JSONDecodeError:
        data = None
    said = None
    if isinstance(data, dict) and describe is not None:
        said = describe(finding.tool.split(".", 1)[-1], data)
    if said is None:
        said = summarize_text(finding.observation)
    source = " (cached fallback)" if finding.source == "fallback" else ""
    quoted = " ".join(said.replace("«", "‹").replace("»", "›").split())  # cannot close the quote
    return f"[{cite}] {finding.tool}({args}){source}: [tool data] «{quoted}»"


EFFECT_CITE = "act"
"""What a finding read again after an action is cited under: `act/E1`."""


def effect_cite(finding: Finding) -> str:
    """The citation of a finding `act` read again after an action ran."""
    return f"{EFFECT_CITE}/{finding.id}"


def effect_lines(state: MusterState, *, describe: Describe | None = None) -> list[str]:
    """What the thread's executed actions changed, as `act` read it again right after each
    (the state's `effects`), one evidence line each, marked as read after the action."""
    return [
        evidence_line(effect_cite(f), f, describe=describe).replace(
            f"{f.tool}(", f"{f.tool} after the action (", 1
        )
        for f in state.get("effects") or []
    ]


def evidence_lines(usable: list[Report], *, describe: Describe | None = None) -> list[str]:
    """The observations behind an answer, one readable line each with its citation
    (`describe`: the pack's reading of its tools' results); a shared fact (one supervisor
    call given to several workers) is shown once."""
    evidence: list[str] = []
    seen_calls: set[str] = set()
    for report in usable:
        for finding in report.findings:
            # Workers' own call ids are unique only within their packet.
            shared = finding.call_id.startswith(SHARED_CALL_PREFIX)
            key = finding.call_id if shared else f"{report.packet_id}/{finding.call_id}"
            if key in seen_calls:
                continue
            seen_calls.add(key)
            evidence.append(
                evidence_line(f"{report.packet_id}/{finding.id}", finding, describe=describe)
            )
    return evidence
