"""The timeline picture as inline SVG, drawn in Python: it shows without JavaScript.

Layout: a time axis on top; the supervisor lane (node bars with their labels, then marks
for approvals, stops and the answer); one lane per dispatch with its model turns (upper
half) and tool calls (lower half); curved arrows from a failed lane to what recovery put in
its place. Labels that would collide are packed into rows (`_pack`), and one that would run
off the right edge is put to the left of its mark. A quiet stretch longer than `GAP_S` (a
human deciding, a crash before a resume, a worker waiting for its first turn) is drawn as a
narrow break labelled with its length, so a two-minute approval does not squeeze the run to
a line. Every text is escaped: ticket and tool text are not ours.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

from graph.app.timeline import Lane, Link, Mark, Span, Timeline

WIDTH = 1240
"""The picture's width in pixels."""
LABEL_W = 320
"""The column of lane titles on the left."""
PLOT_X = LABEL_W + 16
PLOT_W = WIDTH - PLOT_X - 40
AXIS_H = 34
ROW_H = 42
"""A worker lane's height."""
LABEL_ROW_H = 14
"""One row of packed labels under the supervisor's bars and marks."""
GAP_S = 1.0
"""Quiet stretches longer than this are drawn as a break, not to scale."""
BREAK_W = 46
"""A break's width in pixels."""
CHAR_W = 6.4
"""Estimated width of one character of 11 px sans-serif text, for packing labels."""
MIN_BAR_W = 2.5
"""The narrowest bar drawn, so a 1 ms model turn stays visible."""

COLOURS = {
    "model": "#7c6cf2",
    "tool": "#1f9e89",
    "node": "#5b7083",
    "failed": "#d64545",
    "ok": "#2f9e44",
    "fallback": "#e8a33d",
    "running": "#3b82f6",
    "cut": "#9aa5b1",
    "pending": "#c0c8d0",
    "supervisor": "#5b7083",
}
"""Fill colours by what a bar or mark is; the page's legend and CSS use the same."""


def timeline_svg(timeline: Timeline) -> tuple[str, int]:
    """The `<svg>` element of the picture, and its height in pixels."""
    return _Picture(timeline).svg()


# --- the time axis ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Segment:
    start: float
    end: float
    x: float
    """Where the segment starts on the page."""


class _Axis:
    """Time → x, linear inside each busy stretch, with fixed-width breaks between them."""

    def __init__(self, intervals: Iterable[tuple[float, float]], x0: float, width: float) -> None:
        merged: list[list[float]] = []
        for start, end in sorted(intervals):
            if merged and start - merged[-1][1] <= GAP_S:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        if not merged:
            merged = [[0.0, 1.0]]
        busy = sum(max(end - start, 0.001) for start, end in merged)
        breaks = len(merged) - 1
        self.scale = max(width - breaks * BREAK_W, width * 0.3) / busy
        self.segments: list[_Segment] = []
        x = x0
        for start, end in merged:
            self.segments.append(_Segment(start, max(end, start + 0.001), x))
            x += (max(end, start + 0.001) - start) * self.scale + BREAK_W
        self.origin = merged[0][0]
        self._starts = [s.start for s in self.segments]

    def x(self, t: float) -> float:
        """The x of time `t`; a time inside a break maps to the break's middle."""
        index = max(0, bisect_right(self._starts, t) - 1)
        segment = self.segments[index]
        if t <= segment.end:
            return segment.x + max(0.0, t - segment.start) * self.scale
        return segment.x + (segment.end - segment.start) * self.scale + BREAK_W / 2

    def breaks(self) -> list[tuple[float, float]]:
        """(x of the break's middle, seconds of quiet) for each break."""
        return [
            (self.x(a.end) + BREAK_W / 2, b.start - a.end)
            for a, b in zip(self.segments, self.segments[1:], strict=False)
        ]

    def ticks(self) -> list[tuple[float, str]]:
        """Tick positions and labels (time since the first event), about 8 in all."""
        busy = sum(s.end - s.start for s in self.segments)
        step = _nice(busy / 8)
        ticks = []
        for segment in self.segments:
            offset = math.ceil((segment.start - self.origin) / step) * step
            while self.origin + offset <= segment.end + 1e-9:
                ticks.append((self.x(self.origin + offset), _duration(offset)))
                offset += step
        return ticks


def _nice(value: float) -> float:
    """1, 2 or 5 times a power of ten, at least `value`."""
    if value <= 0:
        return 0.001
    power = 10 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= value)


def _duration(seconds: float) -> str:
    """`120 ms`, `1.25 s`, `1 min 36 s`."""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.3g} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


# --- the picture --------------------------------------------------------------------------


def _pack(extents: Sequence[tuple[float, float]]) -> list[int]:
    """For labels spanning (left, right), in time order, the first row where each overlaps
    nothing already placed: earlier events stay on the upper rows."""
    rows: list[list[tuple[float, float]]] = []
    placed = []
    for left, right in extents:
        row = next(
            (
                index
                for index, taken in enumerate(rows)
                if all(right + 6 <= a or left >= b + 6 for a, b in taken)
            ),
            len(rows),
        )
        if row == len(rows):
            rows.append([])
        rows[row].append((left, right))
        placed.append(row)
    return placed


def _label_extent(x: float, text: str, *, pad: float = 0.0) -> tuple[float, float, bool]:
    """Where a label starting at `x` (after `pad`) lies; one that would run off the right
    edge is put to the left of `x` instead (the bool says so)."""
    width = _text_w(text)
    if x + pad + width <= WIDTH - 8:
        return x - pad, x + pad + width, False
    return x - pad - width, x + pad, True


def _text_w(text: str) -> float:
    return len(text) * CHAR_W


class _Picture:
    """Draws the SVG; `svg()` returns it with its height."""

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
        # A dispatch counts by its ends only: a worker that waits a long time before its
        # first turn (for a server to start, say) shows that wait as a break too.
        spans = [s for lane in timeline.lanes for s in lane.spans]
        intervals = [(s.start, s.end) for s in spans if s.kind != "dispatch"]
        intervals += [(t, t) for s in spans if s.kind == "dispatch" for t in (s.start, s.end)]
        intervals += [(m.at, m.at) for lane in timeline.lanes for m in lane.marks]
        intervals += [(link.at, link.at) for link in timeline.links]
        self.axis = _Axis(intervals, PLOT_X, PLOT_W)
        self.parts: list[str] = []
        self.lane_y: dict[str, float] = {}

    def svg(self) -> tuple[str, int]:
        y = float(AXIS_H)
        y = self._supervisor(y)
        for lane in self.timeline.workers:
            self._worker(lane, y)
            y += ROW_H
        height = int(y + 12)
        links = [self._link(link) for link in self.timeline.links]
        head = [
            f'<svg id="timeline" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" role="img" '
            f'aria-label="timeline of thread {escape(self.timeline.thread_id)}">',
            _DEFS,
            self._axis_svg(height),
        ]
        breaks = self._breaks_svg(height)
        return "\n".join([*head, *self.parts, breaks, *links, "</svg>"]), height

    def _axis_svg(self, height: int) -> str:
        out = [f'<g class="axis"><line x1="{PLOT_X}" x2="{PLOT_X + PLOT_W}" y1="22" y2="22"/>']
        for x, label in self.axis.ticks():
            out.append(
                f'<line class="tick" x1="{x:.1f}" x2="{x:.1f}" y1="18" y2="{height}"/>'
                f'<text x="{x + 2:.1f}" y="14">{escape(label)}</text>'
            )
        out.append("</g>")
        return "".join(out)

    def _breaks_svg(self, height: int) -> str:
        """The quiet stretches, drawn over the lanes (nothing of theirs falls inside one)."""
        out = []
        for x, seconds in self.axis.breaks():
            # Written down the break's own column: two breaks side by side never collide.
            quiet = f"{_duration(seconds)} later"
            out.append(
                f'<g class="break" data-seconds="{seconds:.1f}">'
                f'<rect x="{x - BREAK_W / 2 + 6:.1f}" y="18" width="{BREAK_W - 12}" '
                f'height="{height - 18}"/>'
                f'<text x="{x + 4:.1f}" y="28" transform="rotate(90 {x + 4:.1f} 28)">'
                f"{escape(quiet)}</text>"
                f"<title>nothing ran for {escape(_duration(seconds))}</title></g>"
            )
        return "".join(out)

    # --- supervisor -----------------------------------------------------------------------

    def _supervisor(self, y: float) -> float:
        lane = self.timeline.supervisor
        top = y + 6
        bars_y = top + 4
        body: list[str] = []
        bars = [(self.axis.x(s.start), self.axis.x(s.end), s) for s in lane.spans]
        placed = [_label_extent(x1, s.label) for x1, _, s in bars]
        label_rows = _pack([(left, right) for left, right, _ in placed])
        labels_y = bars_y + 26
        for (x1, x2, span), (left, _, flipped), row in zip(bars, placed, label_rows, strict=True):
            body.append(self._bar(span, x1, x2, bars_y, 16, "node"))
            ly = labels_y + row * LABEL_ROW_H
            anchor = (
                f'x="{max(x2, MIN_BAR_W + x1):.1f}" text-anchor="end"'
                if flipped
                else f'x="{left:.1f}"'
            )
            body.append(
                f'<text class="node-label{" failed" if span.failed else ""}" '
                f'{anchor} y="{ly:.1f}">{escape(span.label)}</text>'
            )
        marks_y = labels_y + max(label_rows, default=-1) * LABEL_ROW_H + 20
        mark_x = [self.axis.x(m.at) for m in lane.marks]
        spots = [_label_extent(x, m.label, pad=9) for x, m in zip(mark_x, lane.marks, strict=True)]
        mark_rows = _pack([(left, right) for left, right, _ in spots])
        for x, mark, (_, _, flipped), row in zip(mark_x, lane.marks, spots, mark_rows, strict=True):
            body.append(self._mark(mark, x, marks_y + row * (LABEL_ROW_H + 2), flipped=flipped))
        bottom = marks_y + 4 + (max(mark_rows, default=0) + 1) * (LABEL_ROW_H + 2)
        self.lane_y[lane.key] = top + 12
        self.parts.append(
            f'<g class="lane supervisor" data-lane="{lane.key}" data-status="supervisor">'
            f'<rect class="lane-bg" x="0" y="{y:.1f}" width="{WIDTH}" height="{bottom - y:.1f}"/>'
            f'<text class="lane-title" x="10" y="{top + 14:.1f}">supervisor</text>'
            f'<text class="lane-summary" x="10" y="{top + 30:.1f}">plan · barriers · recovery · '
            f"verify · approval · synthesis</text>" + "".join(body) + "</g>"
        )
        return bottom + 4

    def _mark(self, mark: Mark, x: float, y: float, *, flipped: bool = False) -> str:
        colour = {
            "approval": COLOURS["fallback"],
            "decision": COLOURS["failed"] if mark.failed else COLOURS["ok"],
            "fallback": COLOURS["fallback"],
            "stop": COLOURS["failed"],
            "answer": COLOURS["fallback"] if mark.failed else COLOURS["ok"],
            "waiting": COLOURS["running"],
            "run": COLOURS["cut"],
            "fork": COLOURS["model"],
        }[mark.kind]
        diamond = f"{x:.1f},{y - 6:.1f} {x + 6:.1f},{y:.1f} {x:.1f},{y + 6:.1f} {x - 6:.1f},{y:.1f}"
        text = (
            f'x="{x - 9:.1f}" text-anchor="end"' if flipped else f'x="{x + 9:.1f}"'
        ) + f' y="{y + 4:.1f}"'
        return (
            f'<g class="mark {mark.kind}{" failed" if mark.failed else ""}" '
            f'data-kind="{mark.kind}" data-detail="{escape(mark.detail)}">'
            f'<polygon points="{diamond}" fill="{colour}"/>'
            f"<text {text}>{escape(mark.label)}</text>"
            f"<title>{escape(mark.detail)}</title></g>"
        )

    # --- worker lanes ---------------------------------------------------------------------

    def _worker(self, lane: Lane, y: float) -> None:
        mid = y + ROW_H / 2
        self.lane_y[lane.key] = mid
        body: list[str] = []
        for span in lane.spans:
            x1, x2 = self.axis.x(span.start), self.axis.x(span.end)
            if span.kind == "dispatch":
                body.append(self._bar(span, x1, x2, y + 4, ROW_H - 8, f"dispatch {lane.status}"))
            elif span.kind == "model":
                body.append(self._bar(span, x1, x2, y + 8, 12, "model"))
            else:
                body.append(self._bar(span, x1, x2, y + 22, 12, "tool"))
        for mark in lane.marks:
            x = self.axis.x(mark.at)
            body.append(self._mark(mark, x, mid, flipped=_label_extent(x, mark.label, pad=9)[2]))
        summary = lane.summary if len(lane.summary) <= 52 else lane.summary[:51] + "…"
        badge = {
            "failed": f"FAILED {lane.reason}".strip(),
            "cut": "CUT OFF",
            "running": "RUNNING",
            "fallback": "FALLBACK",
            "pending": "PENDING",
        }.get(lane.status, "")
        badge_svg = (
            f'<text class="badge {lane.status}" x="{LABEL_W - 4}" y="{y + 17:.1f}" '
            f'text-anchor="end">{escape(badge)}</text>'
            if badge
            else ""
        )
        self.parts.append(
            f'<g class="lane worker {lane.status}" data-lane="{lane.key}" '
            f'data-packet="{escape(lane.packet_id)}" data-worker="{escape(lane.worker)}" '
            f'data-attempt="{lane.attempt}" data-status="{lane.status}" '
            f'data-reason="{escape(lane.reason)}">'
            f'<rect class="lane-bg" x="0" y="{y:.1f}" width="{WIDTH}" height="{ROW_H}"/>'
            f'<text class="lane-title" x="10" y="{y + 17:.1f}">{escape(lane.title)}</text>'
            f"{badge_svg}"
            f'<text class="lane-summary" x="10" y="{y + 33:.1f}">{escape(summary)}'
            f"<title>{escape(lane.summary)}</title></text>" + "".join(body) + "</g>"
        )

    def _bar(self, span: Span, x1: float, x2: float, y: float, h: float, kind: str) -> str:
        width = max(x2 - x1, MIN_BAR_W)
        ms = span.duration_ms
        words = f"{span.label} · {ms:.0f} ms" if ms >= 0.5 else span.label
        tip = f"{span.detail} ({ms:.1f} ms)" if ms >= 0.5 else span.detail
        inner = ""
        if span.kind in ("model", "tool") and _text_w(words) * 0.85 + 4 <= width:
            inner = (
                f'<text class="in-bar" x="{x1 + 2:.1f}" y="{y + h - 3:.1f}">{escape(words)}</text>'
            )
        return (
            f'<g class="span {kind}{" failed" if span.failed else ""}" data-kind="{span.kind}" '
            f'data-duration-ms="{ms:.1f}" data-detail="{escape(tip)}">'
            f'<rect x="{x1:.1f}" y="{y:.1f}" width="{width:.1f}" height="{h}" rx="2"/>'
            f"{inner}<title>{escape(tip)}</title></g>"
        )

    # --- recovery links -------------------------------------------------------------------

    def _link(self, link: Link) -> str:
        lanes = {lane.key: lane for lane in self.timeline.workers}
        source = lanes.get(link.source)
        target = lanes.get(link.target) if link.target else None
        if source is None:
            return ""
        x1 = self.axis.x(source.end or link.at)
        y1 = self.lane_y[source.key]
        if target is not None:
            x2 = self.axis.x(target.start if target.start is not None else link.at)
            y2 = self.lane_y[target.key]
        else:
            x2, y2 = x1 + 40, y1 - 12
        bend = max(24.0, abs(x2 - x1) / 2)
        path = (
            f"M{x1:.1f},{y1:.1f} "
            f"C{x1 + bend:.1f},{y1:.1f} {x2 - bend:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"
        )
        label = f"{link.strategy}" + ("" if target is not None else " (not started)")
        lx, ly = (x1 + x2) / 2, (y1 + y2) / 2
        detail = f"{link.strategy} after {link.reason}: {link.detail}"
        return (
            f'<g class="link {escape(link.strategy)}" data-strategy="{escape(link.strategy)}" '
            f'data-from="{link.source}" data-to="{link.target or ""}" '
            f'data-detail="{escape(detail)}">'
            f'<path d="{path}" marker-end="url(#arrow)"/>'
            f'<rect x="{lx - _text_w(label) / 2 - 4:.1f}" y="{ly - 9:.1f}" '
            f'width="{_text_w(label) + 8:.1f}" height="15" rx="7"/>'
            f'<text x="{lx:.1f}" y="{ly + 2:.1f}" text-anchor="middle">{escape(label)}</text>'
            f"<title>{escape(detail)}</title></g>"
        )


_DEFS = (
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
    'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
    'fill="#b3541e"/></marker></defs>'
)
