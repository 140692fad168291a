"""Where the timeline's labels go: beside their anchor, inside the anchor's room.

A room is an x range no band crosses: one busy stretch of the axis, less the breaks' bands
either side (`timeline_axis.Axis.rooms`). A label goes to the right of its anchor if it fits
there, else to the left, else (a node's label, which sits under its bar) moved along inside
the room, else shortened with an ellipsis to the wider side; the whole text stays in the
tooltip. Text widths are estimated, generously, from the font size and the characters:
the picture is drawn in Python, without a browser to measure it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CHAR_EM = 0.6
"""Estimated width of one character, in ems of its font size (sans-serif, generous)."""
FONT = 11.0
"""The picture's default font size in pixels."""


def text_width(text: str, size: float = FONT) -> float:
    """The estimated width of `text` in a font of `size` pixels."""
    return len(text) * size * CHAR_EM


@dataclass(frozen=True)
class Placed:
    """A label where it goes: its text (shortened if it had to be), the x and anchor of its
    `<text>`, and the box it covers."""

    text: str
    x: float
    anchor: str
    """start, end or middle."""
    left: float
    right: float


def room_at(rooms: Sequence[tuple[float, float]], x: float) -> tuple[float, float]:
    """The room `x` is in, or the nearest one."""
    return min(rooms, key=lambda r: max(r[0] - x, 0.0, x - r[1]))


def place_label(
    rooms: Sequence[tuple[float, float]],
    at: float,
    text: str,
    *,
    size: float = FONT,
    pad: float = 0.0,
    shift: bool = True,
) -> Placed:
    """`text` beside x `at`, inside `at`'s room: to the right (after `pad`) if it fits, else
    to the left, else (if `shift`) moved along to fit, else shortened to the wider side with
    an ellipsis. A label never reaches into a band."""
    left_edge, right_edge = room_at(rooms, at)
    width = text_width(text, size)
    if at + pad + width <= right_edge:
        return Placed(text, at + pad, "start", at + pad, at + pad + width)
    if at - pad - width >= left_edge:
        return Placed(text, at - pad, "end", at - pad - width, at - pad)
    if shift and width <= right_edge - left_edge:
        start = max(left_edge, right_edge - width)
        return Placed(text, start, "start", start, start + width)
    right_room, left_room = right_edge - at - pad, at - pad - left_edge
    room = max(right_room, left_room)
    keep = max(0, int(room // (size * CHAR_EM)) - 1)
    short = text[:keep] + "…"
    width = text_width(short, size)
    if right_room >= left_room:
        return Placed(short, at + pad, "start", at + pad, at + pad + width)
    return Placed(short, at - pad, "end", at - pad - width, at - pad)


def place_centred(
    rooms: Sequence[tuple[float, float]], centre: float, text: str, *, size: float, margin: float
) -> Placed:
    """`text` centred on `centre` (a box `margin` wider each side), moved into the nearest
    room it fits in (a link's label, between two lanes that may be either side of a band)."""
    half = text_width(text, size) / 2 + margin
    fits = [
        min(max(centre, left + half), right - half)
        for left, right in rooms
        if right - left >= 2 * half
    ]
    c = min(fits, key=lambda c: abs(c - centre), default=centre)
    return Placed(text, c, "middle", c - half, c + half)
