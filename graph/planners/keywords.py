"""The data-only planner: a domain pack's keyword table turned into packets.

A pack without a planner plug-in gives a table (`planner.json`):

```json
{"intents": [{"name": "weather", "label": "the weather", "keywords": ["weather", "rain"],
              "packets": [{"worker": "forecaster", "objective": "Find the forecast.",
                           "inputs": {"query": "{request}"}}]}]}
```

An intent is found when one of its keywords starts a word of the request (case-insensitive);
each found intent adds its packets, with `{request}` in an input replaced by the request.
A request with no intent gets no packets, so its answer goes to a human.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from graph.planners.base import DEFAULT_TIMEOUT_S, TicketReading
from workers.contracts import Handoff
from workers.errors import ConfigError
from workers.roster import Roster


class PacketTemplate(BaseModel):
    """One packet an intent sends."""

    worker: str
    """The roster worker that runs it."""
    objective: str
    """One testable sentence."""
    inputs: dict[str, str] = Field(default_factory=dict)
    """Packet inputs; `{request}` stands for the request text."""


class KeywordIntent(BaseModel):
    """One intent: the words that signal it and the packets it needs."""

    name: str
    """Stable label."""
    label: str = ""
    """How the answer names it."""
    keywords: list[str]
    """Word prefixes that signal it."""
    packets: list[PacketTemplate] = Field(default_factory=list)
    """What to send when it is found."""


class KeywordTable(BaseModel):
    """A pack's keyword table."""

    intents: list[KeywordIntent]
    """Every intent, in planning order."""

    @property
    def intent_names(self) -> tuple[str, ...]:
        """Every intent the table can find."""
        return tuple(i.name for i in self.intents)

    def read(self, request: str) -> TicketReading:
        """The intents found in `request`."""
        text = request.lower()
        found = tuple(
            i.name
            for i in self.intents
            if any(re.search(rf"(?<!\w){re.escape(k.lower())}", text) for k in i.keywords)
        )
        return TicketReading(
            intents=found, order_ids=(), language="English", timezone=None, about_an_order=False
        )

    def plan(self, request: str, roster: Roster) -> list[Handoff]:
        """One packet per template of every intent found, for workers on the roster."""
        found = set(self.read(request).intents)
        packets: list[Handoff] = []
        for intent in self.intents:
            if intent.name not in found:
                continue
            for template in intent.packets:
                spec = roster.get(template.worker)
                if spec is None:
                    continue
                inputs = {
                    k: v.replace("{request}", " ".join(request.split())[:300])
                    for k, v in template.inputs.items()
                }
                packets.append(
                    Handoff(
                        id=f"{template.worker}-{len(packets) + 1}",
                        recipient=template.worker,
                        objective=template.objective,
                        inputs={**inputs, "intents": intent.name},
                        tool_allow=spec.privileges,
                        max_steps=spec.max_steps,
                        timeout_s=DEFAULT_TIMEOUT_S,
                    )
                )
        return packets


def load_keyword_table(path: Path) -> KeywordTable:
    """Read and validate a keyword table (a `ConfigError` says what is wrong)."""
    try:
        return KeywordTable.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError, ValidationError) as error:
        first = str(error).splitlines()[0]
        raise ConfigError(f"planner table {path} is malformed: {first}") from None
