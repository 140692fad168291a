"""The data-only planner: a domain pack's keyword table turned into packets.

A pack without a planner plug-in gives a table (`planner.json`):

```json
{"intents": [{"name": "weather", "label": "the weather", "keywords": ["weather", "rain"],
              "packets": [{"worker": "forecaster", "objective": "Find the forecast.",
                           "inputs": {"query": "{request}"}}]}]}
```

An intent is found when one of its keywords starts a word of the request (case-insensitive)
and is not denied just before it ("no refund", "don't cancel"); each found intent adds its
packets, with `{request}` in an input replaced by the request. A request with no intent gets
no packets, so its answer goes to a human.

The reading also says what it did not account for, so the engine's abstention works for a
pack that is only a table (`graph.abstain`): a sentence that asks for something (a question,
"please", "can you", "I want"...) and holds none of the table's keywords is unaccounted, and
the answer is `partial` for a human, naming it; a request in which no intent was found is
unaccounted whole. Greetings, thanks and sign-offs are filler. The cues are English: a table
does not say its language, and a request in another language that finds no keyword is
unaccounted anyway.
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


SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
ASKS = re.compile(
    r"\?|\b(?:please|pls|can (?:you|i|we)|could (?:you|i)|would you|i (?:want|need|would like"
    r"|'d like)|help|how (?:do|can|long)|why|when will|where is|what (?:is|are|happened))\b",
    re.IGNORECASE,
)
"""A sentence that asks for something."""
FILLER = re.compile(
    r"^\W*(?:hi|hello|hey|dear\b.*|thanks?(?: you)?(?: so much| in advance)?|cheers|regards"
    r"|best(?: regards)?|kind regards|sincerely|many thanks|thx|ty)\W*$",
    re.IGNORECASE,
)
DENIED = re.compile(r"\b(?:no|not|don't|do not|never|without)\s+(?:\w+\s+)?$", re.IGNORECASE)
"""A keyword right after this is denied, not asked for."""


def _keyword_at(keyword: str, text: str) -> bool:
    """True if `keyword` starts a word of `text` at least once without a denial before it."""
    for match in re.finditer(rf"(?<!\w){re.escape(keyword.lower())}", text):
        if not DENIED.search(text[max(0, match.start() - 30) : match.start()]):
            return True
    return False


class KeywordTable(BaseModel):
    """A pack's keyword table."""

    intents: list[KeywordIntent]
    """Every intent, in planning order."""

    @property
    def intent_names(self) -> tuple[str, ...]:
        """Every intent the table can find."""
        return tuple(i.name for i in self.intents)

    def read(self, request: str) -> TicketReading:
        """The intents found in `request`, and what asks for something none of them covers."""
        text = request.lower()
        found = tuple(i.name for i in self.intents if any(_keyword_at(k, text) for k in i.keywords))
        keywords = [k.lower() for i in self.intents for k in i.keywords]
        sentences = [s.strip() for s in SENTENCE.split(request) if s.strip()]
        asking = [s for s in sentences if ASKS.search(s) and not FILLER.match(s)]
        unaccounted = [s for s in asking if not any(_keyword_at(k, s.lower()) for k in keywords)]
        if not found:
            unaccounted = [" ".join(request.split())[:300]]
        confidence = 1.0 if not asking else 1 - len(unaccounted) / max(len(asking), 1)
        return TicketReading(
            intents=found,
            order_ids=(),
            language="English",
            timezone=None,
            about_an_order=False,
            unaccounted=tuple(unaccounted),
            confidence=round(max(0.0, confidence), 2) if found else 0.0,
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
