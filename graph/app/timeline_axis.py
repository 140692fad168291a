"""The timeline's time axis: time → x, the breaks, the ticks, and the rooms labels may use.

How a person reads a thread is step by step, so the axis gives room to steps, not to clock
time alone. Three rules, in order:

1. A human's wait (`timeline.Wait`: the thread paused for a clarification or an approval)
   is always a break, however short, labelled with how long the human took: it is no one's
   work, and a bar for it would read as a step that ran for that long.
2. Any other quiet stretch longer than `GAP_S` (nothing running: a crash before a resume, a
   worker waiting for its server or its first turn) is a break too, labelled with its length.
   A break is a fixed-width column, not to scale.
3. Inside a busy stretch the scale is piecewise: time is cut at every bar's ends and every
   mark, and a piece lasting `d` gets a width proportional to `d` up to the knee `τ` (the
   length of a typical step: the median model turn, tool call and supervisor node) and to
   `τ·(1 + ln(d/τ))` beyond it. Steps of a typical length keep their proportions; one 100
   times longer is drawn about 5.6 times wider, still the longest bar on the page but no
   longer most of it (the offline plan step, loading its model for two seconds while the
   workers' turns take milliseconds, filled 60-80% of a linear axis). Dense parallel work, cut
   into many pieces, gets the room its bars and labels need. A logarithmic axis of clock
   time would not do: it squeezes whatever comes late, however busy. The ticks say the real
   elapsed time, so a compressed stretch shows as ticks far apart in time and close on the
   page, and the picture says the scale is compressed.

Labels stay out of the breaks' bands: every busy stretch is a room (`Axis.rooms`: its x
range, less the bands on either side) and `timeline_labels` puts each label inside one.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate

from graph.app.timeline import Wait
from graph.app.timeline_labels import FONT, text_width

GAP_S = 1.0
"""Quiet stretches longer than this are drawn as a break, not to scale."""
BREAK_W = 46.0
"""A break's width in pixels (less when there are very many)."""
BAND_INSET = 6.0
"""The grey band is this much narrower than its break on each side."""
SEG_PAD = 20.0
"""Room around each busy stretch (half on each side), so a lone instant has some."""
LABEL_GAP = 3.0
"""The least distance between a label and a band."""


def knee(durations: Iterable[float]) -> float:
    """The length of a typical step (seconds): the median of the positive `durations`,
    bounded to [0.5 ms, 2 s]; the axis is linear up to it and compressed beyond."""
    positive = sorted(d for d in durations if d > 0)
    if not positive:
        return 0.01
    return min(max(positive[len(positive) // 2], 0.0005), 2.0)


@dataclass(frozen=True)
class Break:
    """A column of the axis that is not to scale: a quiet stretch or a human's wait."""

    left: float
    """x where the column starts."""
    right: float
    """x where it ends."""
    seconds: float
    """How long nothing ran."""
    wait: Wait | None
    """The human's wait it stands for, if it is one."""

    @property
    def middle(self) -> float:
        return (self.left + self.right) / 2

    @property
    def band(self) -> tuple[float, float]:
        """The grey band's x range."""
        inset = min(BAND_INSET, (self.right - self.left) / 4)
        return self.left + inset, self.right - inset


@dataclass
class _Segment:
    cuts: list[float]
    """Times where a bar starts or ends, or a mark is, ascending."""
    widths: list[float]
    """Width of each piece between two cuts, in weight units until scaled."""
    before: list[float] = field(default_factory=list)
    """Once laid out: the width of the pieces before each cut."""
    x: float = 0.0
    """Where its first cut is drawn."""
    left: float = 0.0
    right: float = 0.0
    """Its x range, pads included."""

    @property
    def start(self) -> float:
        return self.cuts[0]

    @property
    def end(self) -> float:
        return self.cuts[-1]


class Axis:
    """Time → x over [x0, x0 + width]: breaks for human waits and quiet stretches, and a
    piecewise, compressed scale inside busy stretches (see the module's docstring)."""

    def __init__(
        self,
        intervals: Iterable[tuple[float, float]],
        waits: Sequence[Wait],
        x0: float,
        width: float,
        *,
        knee_s: float,
        right_edge: float,
        labels: Iterable[tuple[float, float]] = (),
    ) -> None:
        """`labels`: (time, pixels) for each label to be written beside an instant, so each
        busy stretch is made wide enough to hold its labels beside their anchors (taken
        from the compressed scale of the others) rather than shortened."""
        self.waits = sorted(waits, key=lambda w: w.start)
        self.right_edge = right_edge
        pieces = sorted(p for a, b in intervals for p in self._outside_waits(a, b))
        groups: list[list[tuple[float, float]]] = []
        end = -math.inf
        for start, stop in pieces:
            if groups and start - end <= GAP_S and not self._wait_between(end, start):
                groups[-1].append((start, stop))
            else:
                groups.append([(start, stop)])
            end = max(end, stop) if len(groups[-1]) > 1 else stop
        self.segments = [self._segment(group, knee_s) for group in groups or [[(0.0, 0.0)]]]
        self._lay_out(x0, width, list(labels))
        self.origin = self.segments[0].start
        self._starts = [s.start for s in self.segments]

    # --- building ---------------------------------------------------------------------------

    def _outside_waits(self, start: float, end: float) -> list[tuple[float, float]]:
        """[start, end] less the human waits (an instant inside one moves to its end)."""
        pieces = [(start, max(start, end))]
        for wait in self.waits:
            kept = []
            for a, b in pieces:
                if b <= wait.start or a >= wait.end:
                    kept.append((a, b))
                    continue
                if a < wait.start:
                    kept.append((a, wait.start))
                if b > wait.end or a == b:
                    kept.append((wait.end, max(b, wait.end)))
            pieces = kept
        return pieces

    def _wait_between(self, a: float, b: float) -> Wait | None:
        return next((w for w in self.waits if a - 1e-6 <= w.start and w.end <= b + 1e-6), None)

    @staticmethod
    def _segment(group: list[tuple[float, float]], knee_s: float) -> _Segment:
        cuts: list[float] = []
        for t in sorted({t for piece in group for t in piece}):
            if not cuts or t - cuts[-1] > 1e-6:
                cuts.append(t)
        widths = [_compress(b - a, knee_s) for a, b in zip(cuts, cuts[1:], strict=False)]
        return _Segment(cuts=cuts, widths=widths)

    def _lay_out(self, x0: float, width: float, labels: list[tuple[float, float]]) -> None:
        """Scale the pieces to the width left after the breaks and pads, every stretch at
        least as wide as its labels need, and place them."""
        gaps = len(self.segments) - 1
        break_w, pad = BREAK_W, SEG_PAD
        fixed = gaps * break_w + len(self.segments) * pad
        if fixed > 0.6 * width:  # very many breaks: narrower columns, the rest to scale
            shrink = 0.6 * width / fixed
            break_w, pad, fixed = break_w * shrink, pad * shrink, 0.6 * width
        content = self._content_widths(width - fixed, self._floors(labels, pad, width - fixed))
        self.breaks: list[Break] = []
        x = x0
        for index, (segment, wide) in enumerate(zip(self.segments, content, strict=True)):
            weight = sum(segment.widths)
            segment.widths = [w * wide / weight for w in segment.widths] if weight else []
            segment.before = list(accumulate(segment.widths, initial=0.0))
            segment.left, segment.x = x, x + pad / 2
            segment.right = segment.x + wide + pad / 2  # an instant's room is on its right
            x = segment.right
            if index < gaps:
                after = self.segments[index + 1]
                wait = self._wait_between(segment.end, after.start)
                self.breaks.append(Break(x, x + break_w, after.start - segment.end, wait))
                x += break_w

    def _floors(self, labels: list[tuple[float, float]], pad: float, room: float) -> list[float]:
        """The content width each stretch needs so that each label fits on the wider side
        of its anchor (at most 45% of the `room` each)."""
        floors = [0.0] * len(self.segments)
        for t, need in labels:
            index = max(0, bisect_right([s.start for s in self.segments], t) - 1)
            segment = self.segments[index]
            weight = sum(segment.widths)
            before = sum(w for w, a in zip(segment.widths, segment.cuts, strict=False) if a < t)
            f = min(before / weight, 1.0) if weight else 0.0
            floors[index] = max(floors[index], (need - pad / 2) / max(f, 1 - f))
        return [min(f, 0.45 * room) for f in floors]

    def _content_widths(self, room: float, floors: list[float]) -> list[float]:
        """Each stretch's width: its compressed length, scaled to fill `room`, or its floor
        if that is more (the floors first, the rest shared by length)."""
        weights = [sum(s.widths) for s in self.segments]
        if sum(floors) >= room:
            return [f * room / sum(floors) for f in floors]
        floored: set[int] = set()
        while True:
            free = [i for i in range(len(weights)) if i not in floored]
            left = room - sum(floors[i] for i in floored)
            weight = sum(weights[i] for i in free)
            if weight <= 0:  # instants only: share what is left out evenly
                share = left / max(len(free), 1)
                return [
                    floors[i] if i in floored else max(share, floors[i])
                    for i in range(len(weights))
                ]
            scale = left / weight
            short = {i for i in free if weights[i] * scale < floors[i]}
            if not short:
                return [
                    floors[i] if i in floored else weights[i] * scale for i in range(len(weights))
                ]
            floored |= short

    # --- reading ----------------------------------------------------------------------------

    def x(self, t: float) -> float:
        """The x of time `t`; a time inside a break maps to the break's middle."""
        index = max(0, bisect_right(self._starts, t) - 1)
        segment = self.segments[index]
        if t <= segment.start:
            return segment.x
        if t <= segment.end:
            piece = min(bisect_right(segment.cuts, t) - 1, len(segment.widths) - 1)
            a, b = segment.cuts[piece], segment.cuts[piece + 1]
            done = segment.before[piece]
            return segment.x + done + (t - a) / (b - a) * segment.widths[piece]
        if index < len(self.breaks):
            return self.breaks[index].middle
        return segment.x + sum(segment.widths)

    def rooms(self) -> list[tuple[float, float]]:
        """Where labels may go: each busy stretch's x range, less the bands either side (the
        first reaches left to its pad, the last right to the picture's edge)."""
        rooms = []
        for index, segment in enumerate(self.segments):
            left = self.breaks[index - 1].band[1] + LABEL_GAP if index else segment.left
            last = index == len(self.segments) - 1
            right = self.right_edge if last else self.breaks[index].band[0] - LABEL_GAP
            rooms.append((left, right))
        return rooms

    def ticks(self, size: float = FONT) -> list[tuple[float, str]]:
        """Tick positions and labels (time since the first event): each busy stretch's start,
        then the roundest times that have room, coarse before fine, none crowding another
        or crossing a band."""
        taken: list[tuple[float, float]] = []
        labels: set[str] = set()
        out: list[tuple[float, str]] = []

        def offer(t: float, label: str, room: tuple[float, float]) -> None:
            x = self.x(t)
            box = (x, x + max(text_width(label, size) + 12, 56.0))
            if box[0] < room[0] - 1e-6 or box[1] > room[1] + 1e-6:
                return
            if any(box[0] < b and a < box[1] for a, b in taken) or label in labels:
                return  # crowded, or the same words as a tick already there
            labels.add(label)
            taken.append(box)
            out.append((x, label))

        for segment, room in zip(self.segments, self.rooms(), strict=True):
            offer(segment.start, duration(segment.start - self.origin), room)
            span = segment.end - segment.start
            step = _nice(span)
            while span > 0 and step >= max(span / 400, 1e-4):
                first = math.ceil((segment.start - self.origin) / step)
                last = math.floor((segment.end - self.origin) / step + 1e-9)
                for k in range(first, last + 1):
                    offer(self.origin + k * step, _tick_label(k * step, step), room)
                step = _finer(step)
        return sorted(out)


def _compress(d: float, knee_s: float) -> float:
    """A piece's weight: its length up to the knee, logarithmic beyond."""
    if d <= knee_s:
        return d
    return knee_s * (1 + math.log(d / knee_s))


def _nice(value: float) -> float:
    """1, 2 or 5 times a power of ten, at least `value`."""
    if value <= 0:
        return 0.001
    power = 10 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= value - 1e-12)


def _finer(step: float) -> float:
    """The next nice step below `step` (5 → 2 → 1 → 0.5 …)."""
    power = 10 ** math.floor(math.log10(step) + 1e-9)
    mantissa = round(step / power)
    return {5: 2, 2: 1}.get(mantissa, 0.5) * power


def _tick_label(offset: float, step: float) -> str:
    """`offset` with the precision its `step` needs: `12.5 ms`, `1.98 s`, `1 min 36 s`."""
    if offset >= 60 and step >= 1:
        return duration(offset)
    if offset < 1:
        value, unit, unit_step = offset * 1000, "ms", step * 1000
    else:
        value, unit, unit_step = offset, "s", step
    decimals = max(0, -math.floor(math.log10(unit_step) + 1e-9))
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text} {unit}"


def duration(seconds: float) -> str:
    """`120 ms`, `1.25 s`, `1 min 36 s`: how the picture writes a length of time."""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.3g} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"
