"""Reading the reports' observations back as facts: the order, its refunds, the policies, the
knowledge-base articles, the callback time. Pure functions over typed `Report`s.

Each fact keeps its citation (`packet_id/finding_id`), so every sentence the answer builds
from it can say what it rests on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from workers.contracts import Finding, Report


@dataclass(frozen=True)
class Cited:
    """A JSON observation and where it came from."""

    data: dict[str, Any]
    """The tool's JSON result."""
    cite: str
    """`packet_id/finding_id`."""
    fallback: bool = False
    """True when it came from a cached fallback, not a live call."""


@dataclass
class TicketFacts:
    """Everything the reports observed, by kind."""

    orders: dict[str, Cited] = field(default_factory=dict)
    """Order records by order id (`orders.find_order`)."""
    refunds: dict[str, Cited] = field(default_factory=dict)
    """Refund status by order id (`orders.refund_status`)."""
    policies: dict[str, Cited] = field(default_factory=dict)
    """Policies by topic (`policy.check_policy`, or a cached snapshot)."""
    articles: dict[str, Cited] = field(default_factory=dict)
    """Knowledge-base articles by id (`kb.get_article` or `kb.search_kb` results)."""
    local_times: dict[str, Cited] = field(default_factory=dict)
    """Current local time by time zone (`time.get_current_time`)."""


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _cite(report: Report, finding: Finding) -> str:
    return f"{report.packet_id}/{finding.id}"


def read_facts(reports: Iterable[Report]) -> TicketFacts:
    """The facts in usable reports (ok, live or fallback), first observation wins."""
    facts = TicketFacts()
    for report in reports:
        if report.status != "ok":
            continue
        for finding in report.findings:
            data = _json(finding.observation)
            cite = _cite(report, finding)
            tool = finding.tool.split(".", 1)[-1]
            if isinstance(data, dict) and tool == "find_order" and "order_id" in data:
                facts.orders.setdefault(str(data["order_id"]), Cited(data, cite))
            elif isinstance(data, dict) and tool == "refund_status" and "order_id" in data:
                facts.refunds.setdefault(str(data["order_id"]), Cited(data, cite))
            elif isinstance(data, dict) and tool == "check_policy" and "topic" in data:
                facts.policies.setdefault(str(data["topic"]), Cited(data, cite))
            elif isinstance(data, dict) and tool == "get_article" and "id" in data:
                facts.articles.setdefault(str(data["id"]), Cited(data, cite))
            elif isinstance(data, dict) and tool == "search_kb":
                for result in data.get("results") or []:
                    if isinstance(result, dict) and "id" in result:
                        facts.articles.setdefault(str(result["id"]), Cited(result, cite))
            elif isinstance(data, dict) and "timezone" in data and "datetime" in data:
                facts.local_times.setdefault(str(data["timezone"]), Cited(data, cite))
            elif finding.source == "fallback" and (snapshot := _snapshot(finding)):
                facts.policies.setdefault(snapshot["topic"], Cited(snapshot, cite, fallback=True))
    return facts


SNAPSHOT_ENTRY = re.compile(r"^(POL-[A-Z]+-\d+) \(snapshot ([\d-]+)\): (.*)$", re.DOTALL)
"""A cached policy, as `fallbacks.py` writes it: `POL-BIL-004 (snapshot 2026-11-29): …`."""


def _snapshot(finding: Finding) -> dict[str, Any] | None:
    """The policy a cached snapshot finding carries, if it is one."""
    match = SNAPSHOT_ENTRY.match(finding.observation.strip())
    topic = finding.args.get("topic")
    if match is None or not topic:
        return None
    return {
        "topic": str(topic),
        "policy_id": match.group(1),
        "snapshot": match.group(2),
        "text": match.group(3),
    }


def money(cents: int) -> str:
    """$129.00"""
    return f"${cents / 100:,.2f}"
