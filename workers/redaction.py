"""The redaction policy: personal data out of what leaves a run's memory in clear.

What it replaces, in any text (a trace line's fields, a span attribute, a timeline label, a
log line, an audit row's result):

- e-mail addresses, as `[email]`;
- card numbers (PANs): 13 to 19 digits, whole or grouped by spaces or dashes, starting as
  the card networks do (2 to 6) and passing the Luhn check, as `[card]`; a number that fails
  Luhn (an id, an amount in cents) is left alone;
- phone numbers as people write them: international (`+44 20 7946 0958`, `+1 (555)
  010-9999`, `0044 20 7946 0958`, `+4915112345678`), national with a trunk 0 (`020 7946 0958`,
  `06 12 34 56 78`, `07700 900123`), with an area code in brackets (`(555) 123-4567`) or in
  the North American 3-3-4 form (`555-123-4567`), as `[phone]`: 8 to 15 digits in all;
- the customer names the orders data gives, as `[name]`: each value under a `customer` (or
  `customer_name`) key of a tool result the process has seen is learnt (`learn`), and its
  full form ("R. Okafor", "R Okafor") and its family name alone ("Okafor") are replaced
  wherever they appear, in any case, as whole words. A name the orders data never gave (a
  ticket signed "Jane") is not known, so it is not replaced.

What it leaves: order ids, dates, ISO timestamps, amounts, durations, digests, policy and
article ids, versions, addresses of hosts (`tests/fixtures/redaction_cases.jsonl` is the
labelled corpus: each line a text, what it must become, and why).

On by default; `MUSTER_REDACT=off` (or `0`, `false`, `no`) turns it off for the whole process
(`enabled`). The names learnt are the process's (a bounded set, the most recent kept): a log
line has no run to ask, and a long-lived process (`muster serve`, a fleet worker) sees many
customers.

Redaction is one way: what it replaced is gone from its output. The trace keeps the original
values sealed beside the redacted ones (graph/trace_seal.py) so `muster replay` still serves
what the run saw; OpenTelemetry, the timeline and the logs get the redacted text only.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel

ENV = "MUSTER_REDACT"
"""The switch: unset or anything but off/0/false/no means on."""
OFF_WORDS = frozenset({"off", "0", "false", "no"})

EMAIL = "[email]"
PHONE = "[phone]"
CARD = "[card]"
NAME = "[name]"

NAME_KEYS = ("customer", "customer_name")
"""Keys whose values, in a tool result, are a customer's name (support's orders server's
`customer`)."""
MAX_NAMES = 4096
"""How many learnt names a process keeps (the oldest go first)."""
MIN_FAMILY_NAME = 3
"""A family name shorter than this is replaced only with the rest of the name."""

_EMAIL = re.compile(
    r"(?<![\w.+%-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![\w-])"
)
_CARD = re.compile(r"(?<![\w.,+-])[2-6]\d{3}(?:[ -]?\d){9,15}(?![\w-]|[.,]\d)")
_PHONE = re.compile(
    "(?:"
    + "|".join(
        (
            # international: + or 00, a country code, then groups (a bracketed one allowed)
            # (never a group inside an id: "01a23849-0012-7123-a203" is a uuid)
            r"(?<![\w+.\-])(?:\+|00(?=[1-9]\d*[ .\-(]))[1-9][\d]{0,3}(?:[ .\-]?\(?\d{1,5}\)?){1,6}",
            # a bracketed area code: (555) 123-4567, (020) 7946 0958
            r"(?<![\w)])\(\d{2,5}\)[ .\-]?\d{3,4}[ .\-]?\d{3,4}",
            # North American 3-3-4 with separators: 555-123-4567, 555.123.4567
            r"(?<![\w.\-])\d{3}([.\- ])\d{3}\1\d{4}",
            # a national number with its trunk 0, grouped: 020 7946 0958, 06 12 34 56 78
            r"(?<![\w.\-/:])0[1-9]\d{0,4}(?:[ \-]\d{2,8}){1,4}",
            # a national number with its trunk 0, whole: 07700900123
            r"(?<![\w.\-/:])0[1-9]\d{8,9}",
        )
    )
    + r")(?![\w]|[.,:/\-]\d)"
)
_DIGIT = re.compile(r"\d")


def enabled() -> bool:
    """Whether redaction is on for this process (`MUSTER_REDACT`)."""
    return os.environ.get(ENV, "").strip().lower() not in OFF_WORDS


def luhn_ok(digits: str) -> bool:
    """The Luhn check every card number passes (and most other digit strings fail)."""
    total = 0
    for i, char in enumerate(reversed(digits)):
        d = int(char)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card(match: re.Match[str]) -> str:
    text = match.group(0)
    separators = set(re.sub(r"\d", "", text))
    digits = re.sub(r"\D", "", text)
    if len(separators) > 1 or not 13 <= len(digits) <= 19 or not luhn_ok(digits):
        return text
    return CARD


def _phone(match: re.Match[str]) -> str:
    text = match.group(0)
    count = len(_DIGIT.findall(text))
    if not 8 <= count <= 15 or text.count("(") != text.count(")"):
        return text
    return PHONE


class Redactor:
    """The policy, with the customer names learnt so far; thread-safe."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._names: dict[str, None] = {}  # an ordered set: the oldest first
        self._pattern: re.Pattern[str] | None = None
        for name in names:
            self.add_name(name)

    @property
    def names(self) -> list[str]:
        """The names learnt, the oldest first."""
        return list(self._names)

    def add_name(self, name: str) -> bool:
        """Learn one customer name; whether it was new."""
        name = " ".join(name.split())
        if len(name) < 2 or name in self._names:
            return False
        with self._lock:
            self._names[name] = None
            while len(self._names) > MAX_NAMES:
                del self._names[next(iter(self._names))]
            self._pattern = _names_pattern(self._names)
        return True

    def learn(self, value: Any) -> None:
        """Learn the customer names in `value`: a tool result (JSON text), a dict, a list,
        a pydantic model or a dataclass, walked all the way down."""
        for name in _names_in(value, depth=0):
            self.add_name(name)

    def text(self, text: str) -> str:
        """`text` with every e-mail, card, phone and known name replaced."""
        if not text or len(text) < 2:
            return text
        if "@" in text:
            text = _EMAIL.sub(EMAIL, text)
        if _DIGIT.search(text):
            text = _CARD.sub(_card, text)
            text = _PHONE.sub(_phone, text)
        pattern = self._pattern
        if pattern is not None:
            text = pattern.sub(NAME, text)
        return text

    def value(self, value: Any) -> Any:
        """`value` with `text` applied to every string in it (dict values, list and tuple
        items, dataclass fields; keys are not personal data and stay). Unchanged parts are
        the same objects, so `is` tells what changed."""
        return _walk(value, self.text)


def _names_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    forms: set[str] = set()
    for name in names:
        words = [w for w in re.split(r"[\s.]+", name) if w]
        if not words:
            continue
        # the full name, with any dots and spaces between its parts: "R. Okafor", "R Okafor"
        forms.add(r"[\s.]*".join(re.escape(w) for w in words) + (r"\.?" if name[-1] == "." else ""))
        family = words[-1]
        if len(family) >= MIN_FAMILY_NAME:
            forms.add(re.escape(family))
    if not forms:
        return None
    alternatives = "|".join(sorted(forms, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def _names_in(value: Any, *, depth: int) -> Iterable[str]:
    if depth > 12:
        return
    if isinstance(value, str):
        stripped = value.lstrip()
        if stripped[:1] in ("{", "[") and len(stripped) < 1_000_000:
            try:
                parsed = json.loads(stripped)
            except ValueError:
                return
            yield from _names_in(parsed, depth=depth + 1)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if key in NAME_KEYS and isinstance(item, str):
                yield item
            else:
                yield from _names_in(item, depth=depth + 1)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _names_in(item, depth=depth + 1)
    elif isinstance(value, BaseModel):
        for key in type(value).model_fields:
            yield from _names_in(getattr(value, key, None), depth=depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _names_in(getattr(value, f.name, None), depth=depth + 1)


def _walk(value: Any, text: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        items = {k: _walk(v, text) for k, v in value.items()}
        return value if all(items[k] is value[k] for k in value) else items
    if isinstance(value, list | tuple):
        walked = [_walk(v, text) for v in value]
        if all(a is b for a, b in zip(walked, value, strict=True)):
            return value
        return walked if isinstance(value, list) else type(value)(walked)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for f in dataclasses.fields(value):
            if not f.init:
                continue
            old = getattr(value, f.name)
            new = _walk(old, text)
            if new is not old:
                changes[f.name] = new
        return dataclasses.replace(value, **changes) if changes else value
    return value


REDACTOR = Redactor()
"""The process's policy and the names it has learnt."""


def active() -> Redactor | None:
    """The process's redactor, or None when redaction is off."""
    return REDACTOR if enabled() else None


def redact_text(text: str) -> str:
    """`text` redacted, or as it is when redaction is off."""
    return REDACTOR.text(text) if enabled() else text


def redact(value: Any) -> Any:
    """`value` redacted (`Redactor.value`), or as it is when redaction is off."""
    return REDACTOR.value(value) if enabled() else value


def learn(value: Any) -> None:
    """Learn the customer names in `value` (`Redactor.learn`), when redaction is on."""
    if enabled():
        REDACTOR.learn(value)


_previous_factory: Callable[..., logging.LogRecord] | None = None


def _redacting_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
    assert _previous_factory is not None
    record = _previous_factory(*args, **kwargs)
    if not enabled():
        return record
    if not isinstance(record.msg, str):
        # A structured record (structlog hands the stdlib an event dict, as `langgraph dev`
        # does): its values redacted, its type kept, or the structlog formatter breaks.
        record.msg = REDACTOR.value(record.msg)
        record.args = REDACTOR.value(record.args)
        _redact_traceback(record)
        return record
    try:
        message = record.getMessage()
    except (TypeError, ValueError):  # a bad format string: the logging module reports it
        return record
    redacted = REDACTOR.text(message)
    if redacted is not message and redacted != message:
        record.msg, record.args = redacted, ()
    _redact_traceback(record)
    return record


def _redact_traceback(record: logging.LogRecord) -> None:
    if record.exc_info and record.exc_info[1] is not None:
        # The traceback's text is formatted once, here, and kept redacted: the handler's
        # formatter uses `exc_text` when it is set.
        record.exc_text = REDACTOR.text(logging.Formatter().formatException(record.exc_info))


def install_log_redaction() -> None:
    """Redact every log record of this process as it is made (all loggers, every handler:
    a record factory, since a filter on one logger misses its children's records). Once."""
    global _previous_factory
    current = logging.getLogRecordFactory()
    if current is _redacting_factory:
        return
    _previous_factory = current
    logging.setLogRecordFactory(_redacting_factory)
