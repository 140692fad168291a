"""The timeline picture as inline SVG, drawn in Python: it shows without JavaScript.

Layout: a time axis on top (`timeline_axis`: a human's wait and any long quiet stretch are
breaks, the busy stretches are on a compressed scale, so no one long step fills the
picture); the supervisor lane (node bars with their labels, then marks for approvals, stops
and the answer); one lane per dispatch with its model turns (upper half) and tool calls
(lower half); curved arrows from a failed lane to what recovery put in its place. Labels
stay inside their busy stretch, never over a break's band (`timeline_labels.place_label`),
and those that would collide are packed into rows (`_pack`). A human's wait is drawn as a
break with a zig-zag in the axis, "waited 4.2 s for a human", and no bar runs through it.
Every text is escaped: ticket and tool text are not ours.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from graph.app.timeline import Lane, Link, Mark, Span, Timeline
from graph.app.timeline_axis import Axis, Break, duration, knee
from graph.app.timeline_labels import CHAR_EM, Placed, place_centred, place_label, text_width

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
LABEL_SIZE = 10.5
"""Font size of node and mark labels (the page's CSS says the same)."""
LINK_SIZE = 10.0
"""Font size of a recovery link's label."""
IN_BAR_SIZE = 9.5
"""Font size of the words inside a model turn's or tool call's bar."""
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


def _fit(text: str, width: float, size: float, *, em: float = CHAR_EM) -> str:
    """`text`, shortened with an ellipsis if it would be wider than `width` (at `em` a
    character)."""
    if len(text) * size * em <= width:
        return text
    return text[: max(0, int(width // (size * em)) - 1)] + "…"


def _text(placed: Placed, y: float, css: str) -> str:
    """A placed label as `<text>` (the whole label in its tooltip if it was shortened)."""
    anchor = "" if placed.anchor == "start" else f' text-anchor="{placed.anchor}"'
    return (
        f'<text class="{css}" x="{placed.x:.1f}"{anchor} y="{y:.1f}">{escape(placed.text)}</text>'
    )


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
        self.knee = knee(s.end - s.start for s in spans if s.kind != "dispatch")
        # Room for the words beside each instant: a node's label, a mark's after its diamond.
        labels = [(s.start, text_width(s.label, LABEL_SIZE)) for s in timeline.supervisor.spans]
        labels += [
            (m.at, text_width(m.label, LABEL_SIZE) + 12)
            for lane in timeline.lanes
            for m in lane.marks
        ]
        self.axis = Axis(
            intervals,
            timeline.waits,
            PLOT_X,
            PLOT_W,
            knee_s=self.knee,
            right_edge=WIDTH - 8,
            labels=labels,
        )
        self.rooms = self.axis.rooms()
        """Where labels may go: the busy stretches, less the breaks' bands."""
        self.parts: list[str] = []
        self.lane_y: dict[str, float] = {}
        self.link_boxes: list[tuple[float, float, float]] = []
        """(left, right, y) of each link's label drawn so far: the next one steps aside."""

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
        breaks = "".join(self._break_svg(b, height) for b in self.axis.breaks)
        return "\n".join([*head, *self.parts, breaks, *links, "</svg>"]), height

    def _axis_svg(self, height: int) -> str:
        scale = f"elapsed · beyond {duration(self.knee)} a step is compressed"
        out = [
            f'<g class="axis" data-knee-ms="{self.knee * 1000:.2f}">'
            f'<text class="axis-note" x="10" y="14">{escape(scale)}</text>'
        ]
        # The axis line stops at each break: the break draws its zig-zag across the gap.
        for segment in self.axis.segments:
            out.append(f'<line x1="{segment.left:.1f}" x2="{segment.right:.1f}" y1="22" y2="22"/>')
        for x, label in self.axis.ticks():
            out.append(
                f'<line class="tick" x1="{x:.1f}" x2="{x:.1f}" y1="18" y2="{height}"/>'
                f'<text x="{x + 2:.1f}" y="14">{escape(label)}</text>'
            )
        out.append("</g>")
        return "".join(out)

    def _break_svg(self, brk: Break, height: int) -> str:
        """A break, drawn over the lanes (nothing of theirs falls inside one): a band down
        its column, a zig-zag where it cuts the axis and its words written down the band."""
        left, right = brk.band
        x = brk.middle
        teeth = 4
        zigzag = " ".join(
            f"{brk.left + (brk.right - brk.left) * i / teeth:.1f},{17 if i % 2 else 27}"
            for i in range(teeth + 1)
        )
        wait = brk.wait
        if wait is not None:
            words = f"⋯ waited {duration(wait.seconds)} for a human"
            tip = f"paused {duration(wait.seconds)} for a human ({wait.kind}): {wait.detail}"
            head = (
                f'<g class="break human" data-kind="{escape(wait.kind)}" '
                f'data-seconds="{brk.seconds:.1f}" data-wait-seconds="{wait.seconds:.1f}" '
                f'data-detail="{escape(tip)}">'
            )
        else:
            words = f"{duration(brk.seconds)} later"
            tip = f"nothing ran for {duration(brk.seconds)}"
            head = f'<g class="break" data-seconds="{brk.seconds:.1f}">'
        return (
            f'{head}<rect x="{left:.1f}" y="18" width="{right - left:.1f}" '
            f'height="{height - 18}"/>'
            f'<polyline class="zigzag" points="{zigzag}"/>'
            f'<text x="{x - 4:.1f}" y="34" transform="rotate(90 {x - 4:.1f} 34)">'
            f"{escape(words)}</text>"
            f"<title>{escape(tip)}</title></g>"
        )

    def _clip(self, span: Span) -> tuple[float, float]:
        """The span's x range, with any part inside a human's wait cut off: a wait is never
        drawn as a bar (the builder already starts nodes after one; this is the picture's
        own guarantee)."""
        start, end = span.start, span.end
        for wait in self.timeline.waits:
            if wait.start <= start and end <= wait.end:
                start = end = wait.end
            elif start < wait.end and end > wait.start:
                if end > wait.end:
                    start = max(start, wait.end)
                else:
                    end = min(end, wait.start)
        return self.axis.x(start), self.axis.x(max(start, end))

    # --- supervisor -----------------------------------------------------------------------

    def _supervisor(self, y: float) -> float:
        lane = self.timeline.supervisor
        top = y + 6
        bars_y = top + 4
        body: list[str] = []
        bars = [(*self._clip(s), s) for s in lane.spans]
        labels = [place_label(self.rooms, x1, s.label, size=LABEL_SIZE) for x1, _, s in bars]
        label_rows = _pack([(p.left, p.right) for p in labels])
        labels_y = bars_y + 26
        for (x1, x2, span), placed, row in zip(bars, labels, label_rows, strict=True):
            body.append(self._bar(span, x1, x2, bars_y, 16, "node"))
            css = "node-label" + (" failed" if span.failed else "")
            body.append(_text(placed, labels_y + row * LABEL_ROW_H, css))
        marks_y = labels_y + max(label_rows, default=-1) * LABEL_ROW_H + 20
        mark_x = [self.axis.x(m.at) for m in lane.marks]
        spots = [self._mark_label(x, m) for x, m in zip(mark_x, lane.marks, strict=True)]
        # A mark's diamond is part of what must not collide.
        mark_rows = _pack(
            [(min(p.left, x - 7), max(p.right, x + 7)) for x, p in zip(mark_x, spots, strict=True)]
        )
        for x, mark, placed, row in zip(mark_x, lane.marks, spots, mark_rows, strict=True):
            body.append(self._mark(mark, x, marks_y + row * (LABEL_ROW_H + 2), placed))
        bottom = marks_y + 4 + (max(mark_rows, default=0) + 1) * (LABEL_ROW_H + 2)
        self.lane_y[lane.key] = top + 12
        self.parts.append(
            f'<g class="lane supervisor" data-lane="{lane.key}" data-status="supervisor">'
            f'<rect class="lane-bg" x="0" y="{y:.1f}" width="{WIDTH}" height="{bottom - y:.1f}"/>'
            f'<text class="lane-title" x="10" y="{top + 14:.1f}">supervisor</text>'
            f'<text class="lane-summary" x="10" y="{top + 30:.1f}">plan · barriers · recovery · '
            f"approval · answer</text>" + "".join(body) + "</g>"
        )
        return bottom + 4

    def _mark_label(self, x: float, mark: Mark) -> Placed:
        """A mark's words beside its diamond, never over a band (shortened if need be)."""
        return place_label(self.rooms, x, mark.label, size=LABEL_SIZE, pad=9, shift=False)

    def _mark(self, mark: Mark, x: float, y: float, placed: Placed) -> str:
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
        return (
            f'<g class="mark {mark.kind}{" failed" if mark.failed else ""}" '
            f'data-kind="{mark.kind}" data-detail="{escape(mark.detail)}">'
            f'<polygon points="{diamond}" fill="{colour}"/>'
            f"{_text(placed, y + 4, 'mark-label')}"
            f"<title>{escape(mark.detail)}</title></g>"
        )

    # --- worker lanes ---------------------------------------------------------------------

    def _worker(self, lane: Lane, y: float) -> None:
        mid = y + ROW_H / 2
        self.lane_y[lane.key] = mid
        body: list[str] = []
        for span in lane.spans:
            x1, x2 = self._clip(span)
            if span.kind == "dispatch":
                body.append(self._bar(span, x1, x2, y + 4, ROW_H - 8, f"dispatch {lane.status}"))
            elif span.kind == "model":
                body.append(self._bar(span, x1, x2, y + 8, 12, "model"))
            else:
                body.append(self._bar(span, x1, x2, y + 22, 12, "tool"))
        for mark in lane.marks:
            x = self.axis.x(mark.at)
            body.append(self._mark(mark, x, mid, self._mark_label(x, mark)))
        summary = _fit(lane.summary, LABEL_W - 14, LABEL_SIZE)
        badge = {
            "failed": f"FAILED {lane.reason}".strip(),
            "cut": "CUT OFF",
            "running": "RUNNING",
            "fallback": "FALLBACK",
            "pending": "PENDING",
        }.get(lane.status, "")
        # The title and the summary stay in the column left of the plot, clear of the badge.
        # (A title only has to clear the badge, so it is measured less generously.)
        title = _fit(lane.title, LABEL_W - 20 - text_width(badge, 10.0), 11.0, em=0.55)
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
            f'<text class="lane-title" x="10" y="{y + 17:.1f}">{escape(title)}'
            f"<title>{escape(lane.title)}</title></text>"
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
        if span.kind in ("model", "tool") and text_width(words, IN_BAR_SIZE) + 4 <= width:
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
        # The label sits between the two ends, moved out of any band it would cover.
        placed = place_centred(self.rooms, (x1 + x2) / 2, label, size=LINK_SIZE, margin=4)
        lx, ly = placed.x, (y1 + y2) / 2
        while any(
            placed.left < b and a < placed.right and abs(ly - y) < 17 for a, b, y in self.link_boxes
        ):
            ly += 17
        self.link_boxes.append((placed.left, placed.right, ly))
        detail = f"{link.strategy} after {link.reason}: {link.detail}"
        return (
            f'<g class="link {escape(link.strategy)}" data-strategy="{escape(link.strategy)}" '
            f'data-from="{link.source}" data-to="{link.target or ""}" '
            f'data-detail="{escape(detail)}">'
            f'<path d="{path}" marker-end="url(#arrow)"/>'
            f'<rect x="{placed.left:.1f}" y="{ly - 9:.1f}" '
            f'width="{placed.right - placed.left:.1f}" height="15" rx="7"/>'
            f'<text x="{lx:.1f}" y="{ly + 2:.1f}" text-anchor="middle">{escape(label)}</text>'
            f"<title>{escape(detail)}</title></g>"
        )


_DEFS = (
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
    'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
    'fill="#b3541e"/></marker></defs>'
)
