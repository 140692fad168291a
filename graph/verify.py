"""`verify`: check each report's claims against that report's own observations, and find
facts that two reports disagree on.

A claim is a line of a report's note that states an order id, an amount or a date. It must
cite a finding (its id such as `F1`, its tool-call id, or its tool name) and every id,
amount and date in it must appear in a cited observation. Claims that fail are flagged in
`unverified`, and the answer lists them. Fallback reports are exempt (they are already
marked as substitutes), and so are lines that restate the objective or quote a tool error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime

from graph.services import Services, services_for
from graph.state import MusterState, current_reports
from workers.contracts import Finding, Report
from workers.tool_names import to_model_name

NUMBER = re.compile(r"(?<![\d.$])\d{4,8}(?![\d.])")
"""A bare 4-8 digit number in a claim (an order id, most often): checked like any fact."""
AMOUNT = re.compile(r"\$\d[\d,]*(?:\.\d{2})?")
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def checkable_tokens(claim: str) -> list[str]:
    """The ids, amounts and dates a claim states (dates first, so their digits are not
    mistaken for ids)."""
    dates = DATE.findall(claim)
    rest = DATE.sub(" ", claim)
    amounts = AMOUNT.findall(rest)
    rest = AMOUNT.sub(" ", rest)
    return dates + amounts + NUMBER.findall(rest)


def _whole(token: str, text: str) -> bool:
    """`token` appears in `text` as a whole number, not as part of a longer one."""
    return re.search(rf"(?<![\d.]){re.escape(token)}(?![\d]|\.\d)", text) is not None


def _cents(amount: str) -> int:
    return round(float(amount.lstrip("$").replace(",", "")) * 100)


def is_supported(token: str, observations: Sequence[str]) -> bool:
    """A date or id must appear whole; an amount must equal one stated in an observation, as
    dollars ($129.00) or as cents (12900)."""
    if not token.startswith("$"):
        return any(_whole(token, text) for text in observations)
    cents = _cents(token)
    for text in observations:
        if any(_cents(found) == cents for found in AMOUNT.findall(text)):
            return True
        if _whole(str(cents), text):
            return True
    return False


def cited_findings(claim: str, findings: Sequence[Finding]) -> list[Finding]:
    """The findings a claim cites by finding id, tool-call id or tool name."""
    return [
        f
        for f in findings
        if re.search(rf"\b{re.escape(f.id)}\b", claim)
        or (f.call_id and f.call_id in claim)
        or f.tool in claim
        or to_model_name(f.tool) in claim  # a model cites the name it was offered
    ]


def unsupported_claims(report: Report, *, had_tools: bool = True) -> list[str]:
    """One line per claim in `report.note` that its cited observations do not support.

    `had_tools` is False for a packet granted no tools (escalation): its note restates the
    packet, so there is nothing to check it against. A worker that had tools and stated
    facts without using them is checked like any other, and every such claim fails."""
    if report.fallback or report.status != "ok" or not had_tools:
        return []  # substitutes are marked already
    problems = []
    for claim in (line.strip() for line in report.note.splitlines()):
        tokens = checkable_tokens(claim)
        if not tokens or report.objective in claim or "ERROR:" in claim:
            continue  # restating the task or quoting an error is not a claim about the world
        cited = cited_findings(claim, report.findings)
        short = claim if len(claim) <= 120 else claim[:119] + "…"
        if not cited:
            problems.append(f"{report.worker}: claim cites no finding: {short!r}")
            continue
        observations = [f.observation for f in cited]
        missing = [t for t in tokens if not is_supported(t, observations)]
        if missing:
            problems.append(
                f"{report.worker}: {', '.join(missing)} in {short!r} appear in no cited observation"
            )
    return problems


def _facts(report: Report) -> dict[tuple[str, str, str], Any]:
    """Scalar fields of JSON observations that describe one order, keyed (order, tool,
    field): `status` from find_order and from refund_status are different facts."""
    facts: dict[tuple[str, str, str], Any] = {}
    for finding in report.findings:
        try:
            data = json.loads(finding.observation)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and "order_id" in data:
            for key, value in data.items():
                if key != "order_id" and isinstance(value, str | int | float | bool):
                    facts[(str(data["order_id"]), _source(finding.tool), key)] = value
    return facts


def _source(tool: str) -> str:
    """The tool a fact came from; a fallback stands in for the live tool of its worker, so
    `cache.<worker>` facts compare with every tool (marked '*')."""
    return "*" if tool.startswith("cache.") else tool


def find_conflicts(reports: Sequence[Report]) -> list[str]:
    """Facts that two reports state differently, each with the ruling: a live observation
    beats a fallback, and otherwise the first report that observed it stands. The
    disagreement is always recorded, so no last writer wins silently."""
    seen: dict[tuple[str, str, str], tuple[Any, Report]] = {}
    conflicts = []
    ordered = sorted(reports, key=lambda r: r.fallback)  # live reports rule first
    for report in ordered:
        for (order, tool, field), value in _facts(report).items():
            # A fallback fact ("*") stands in for whichever tool observed the same field.
            rivals = [
                (key, seen[key])
                for key in seen
                if key[0] == order
                and key[2] == field
                and "*" in (tool, key[1])
                or key == (order, tool, field)
            ]
            if not rivals:
                seen[(order, tool, field)] = (value, report)
                continue
            for key, (ruled, source) in rivals:
                if ruled != value and source is not report:
                    why = (
                        "live observation over fallback" if report.fallback else "first observation"
                    )
                    conflicts.append(
                        f"order {order} {field} ({key[1]}): {source.worker} says {ruled!r}, "
                        f"{report.worker} says {value!r}; ruled {ruled!r} ({why})"
                    )
    return conflicts


async def verify(state: MusterState, runtime: Runtime[Services]) -> dict[str, Any]:
    """Flag unsupported claims and record conflicting facts."""
    reports = list(current_reports(state.get("reports") or []).values())
    granted = {(p.id, p.attempt): bool(p.tool_allow) for p in state.get("packets") or []}
    unverified = [
        problem
        for report in reports
        for problem in unsupported_claims(
            report, had_tools=granted.get((report.packet_id, report.attempt), True)
        )
    ]
    conflicts = find_conflicts(reports)
    services = await services_for(runtime)
    services.trace_node(
        "verify",
        outcome="flagged" if unverified else "ok",
        unverified=len(unverified),
        conflicts=len(conflicts),
    )
    return {"unverified": unverified, "conflicts": conflicts}
