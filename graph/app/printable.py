"""Text for a terminal: control sequences removed (`printable`, `say`), cut to a column
(`shorten`), counted (`plural`).

Tickets and tool text are not ours: everything `muster` prints about a thread goes through
`printable`, so an escape sequence in a ticket or a tool result (clear the screen, set the
window title, move the cursor) reaches the terminal as nothing. JSON output needs no such
pass: `json.dumps` escapes every control character.
"""

from __future__ import annotations

import re

_CONTROL_SEQUENCES = re.compile(
    r"\x1b\][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"  # OSC: window title, hyperlinks
    r"|\x1b[P^_X][^\x1b\x9c\n]*(?:\x1b\\|\x9c)?"  # DCS, PM, APC, SOS strings
    r"|\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI: colours, cursor moves, clear screen
    r"|\x1b[ -/]*[0-~]?"  # any other escape (ESC c resets the terminal)
    r"|\x9b[0-?]*[ -/]*[@-~]?"  # 8-bit CSI
    r"|[\x90\x98\x9d-\x9f][^\x07\x1b\x9c\n]*(?:\x07|\x9c)?"  # 8-bit OSC, DCS, PM, APC, SOS
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # C0 but newline and tab, DEL, C1 (\r overwrites)
)


def printable(text: str) -> str:
    """`text` without terminal control sequences (ANSI CSI/OSC/DCS escapes, C0 controls other
    than newline and tab, DEL, C1): safe to print to a terminal whoever wrote it."""
    return _CONTROL_SEQUENCES.sub("", text)


def say(text: str = "") -> None:
    """Print `text` to stdout, control sequences removed."""
    print(printable(text))


def shorten(text: str, limit: int, *, cut: bool = False) -> str:
    """`text` on one line (control sequences removed), cut to `limit` characters with "…".
    `cut`: `text` was already cut by its caller, so it ends in "…" whatever its length now
    (a cut that fell on a space leaves it shorter than `limit` once spaces are joined)."""
    line = " ".join(printable(text).split())
    if len(line) <= limit and not cut:
        return line
    if len(line) < limit:
        return line + "…"
    return line[: limit - 1].rstrip() + "…"


def plural(count: int, noun: str) -> str:
    """`1 finding`, `2 findings`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
