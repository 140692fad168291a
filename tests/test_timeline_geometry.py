"""The timeline is drawn as a person reads it (issue 27, item 3): the geometry of the SVG.

Each check reads the picture `timeline_html` writes, as a browser would get it: the x and
width of every bar, the box of every label, the bands of the breaks. A label's box is
estimated from its font size (the page's CSS) and its characters at 0.6 em each, generous
for sans-serif; the checks never ask the drawing code for its own estimate.

- One long step does not fill the axis: the reference run's plan step (two seconds of an
  offline model loading, while the workers' turns take milliseconds) filled 80% of a linear
  axis; now it is the widest supervisor bar but a small share of the width, and the workers'
  turns and calls together are drawn wider than it.
- No label crosses a break's grey band, in the reference run, a clarification and a crowded
  picture built to provoke it (a stretch of many nodes between two breaks, long mark labels
  right after a break, recovery links crossing one).
- A human's wait is a break ("waited 4.2 s for a human", a zig-zag in the axis) and no bar,
  even when the supervisor's node is given a start before the pause, as an older builder
  guessed it; how the builder finds the waits is tests/test_timeline_waits.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from typing import Any

import pytest

from graph.app.timeline import Lane, Link, Mark, Span, Timeline, Wait
from graph.app.timeline_html import timeline_html

T0 = 1_800_000_000.0
EM = 0.6
"""Estimated width of a character, in ems of its font size."""
PLOT = (336.0, 1200.0)
"""The plot's x range (right of the lane titles)."""


# --- reading the picture --------------------------------------------------------------------


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    classes: list[str]
    """Its own classes and those of every element around it."""
    text: str = ""


@dataclass
class Picture(HTMLParser):
    """The `<svg>` of a page: its elements, each with its ancestors' classes, and their text
    (without tooltips)."""

    markup: str
    elements: list[Element] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()
        self._open: list[Element] = []
        self._in_title = 0
        svg = re.search(r'<svg id="timeline".*?</svg>', self.markup, re.S)
        assert svg, "no picture in the page"
        self.feed(svg.group(0))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        around = self._open[-1].classes if self._open else []
        element = Element(tag, values, around + values.get("class", "").split())
        self.elements.append(element)
        if tag == "title":
            self._in_title += 1
        if tag not in ("rect", "line", "polygon", "polyline", "path"):
            self._open.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        around = self._open[-1].classes if self._open else []
        self.elements.append(Element(tag, values, around + values.get("class", "").split()))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title -= 1
        while self._open:
            if self._open.pop().tag == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self._in_title and self._open and self._open[-1].tag == "text":
            self._open[-1].text += data

    def groups(self, css: str) -> list[Element]:
        return [e for e in self.elements if e.tag == "g" and css in e.attrs.get("class", "")]

    def bands(self, *, human: bool | None = None) -> list[tuple[float, float, float, float]]:
        """Each break's band: (left, right, top, bottom)."""
        found = []
        for e in self.elements:
            if e.tag == "rect" and "break" in e.classes:
                if human is not None and ("human" in e.classes) != human:
                    continue
                x, y = float(e.attrs["x"]), float(e.attrs["y"])
                found.append((x, x + float(e.attrs["width"]), y, y + float(e.attrs["height"])))
        return found

    def bars(self, kind: str | None = None) -> list[tuple[float, float, Element]]:
        """Each bar's (left, right) and its rect, of `kind` (model, tool, node, dispatch)."""
        found = []
        for e in self.elements:
            if e.tag == "rect" and "span" in e.classes:
                if kind is not None and kind not in e.classes:
                    continue
                x = float(e.attrs["x"])
                found.append((x, x + float(e.attrs["width"]), e))
        return found

    def label_boxes(self) -> list[tuple[float, float, float, float, str]]:
        """Every text outside a break (a break's own words are written down its band), as
        (left, right, top, bottom, text), estimated from its font size and characters."""
        boxes = []
        for e in self.elements:
            if e.tag != "text" or "break" in e.classes or not e.text:
                continue
            size = font_size(e.classes)
            width = len(e.text) * size * EM
            x, y = float(e.attrs["x"]), float(e.attrs["y"])
            anchor = e.attrs.get("text-anchor", "start")
            left = {"start": x, "end": x - width, "middle": x - width / 2}[anchor]
            boxes.append((left, left + width, y - size, y + 0.3 * size, e.text))
        return boxes


def font_size(classes: list[str]) -> float:
    """The font size the page's CSS gives a text with these classes (and those around it)."""
    if "in-bar" in classes:
        return 9.5
    if "link" in classes or "badge" in classes or "axis-note" in classes:
        return 10.0
    if {"node-label", "mark", "lane-summary"} & set(classes):
        return 10.5
    return 11.0


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def assert_no_label_on_a_band(picture: Picture) -> None:
    bands = picture.bands()
    for left, right, top, bottom, text in picture.label_boxes():
        for band in bands:
            assert not (overlap((left, right), band[:2]) and overlap((top, bottom), band[2:])), (
                f"label {text!r} at x {left:.0f}-{right:.0f} crosses the band at "
                f"x {band[0]:.0f}-{band[1]:.0f}"
            )
        assert right <= 1240, f"label {text!r} runs off the picture"


# --- timelines to draw ---------------------------------------------------------------------


def span(kind: Any, start: float, end: float, label: str, **kw: Any) -> Span:
    return Span(T0 + start, T0 + end, kind, label, detail=label, **kw)


def mark(kind: Any, at: float, label: str, **kw: Any) -> Mark:
    return Mark(T0 + at, kind, label, label, **kw)


def worker(key: str, packet: str, status: Any, spans: list[Span], **kw: Any) -> Lane:
    name = packet.split("-")[0]
    return Lane(key, f"{packet} · {name}", status, status, packet, name, 1, spans=spans, **kw)


def timeline(supervisor: Lane, workers: list[Lane], **kw: Any) -> Timeline:
    return Timeline(
        thread_id="t-geometry",
        request="Customer says order #12345 was charged twice.",
        status="done",
        outcome="answer: partial (degraded)",
        answer_status="partial",
        degraded=True,
        reasons=[],
        supervisor=supervisor,
        workers=workers,
        **{"links": [], **kw},
    )


def reference_like() -> Timeline:
    """The reference run as its trace times it (offline models, the policy server broken):
    a 1.97 s plan, the workers' milliseconds, the refund's approval 3 s later."""
    supervisor = Lane(
        "supervisor",
        "supervisor",
        "supervisor",
        spans=[
            span("node", 0.0, 1.973, "plan · 3 packets"),
            span("node", 3.256, 3.256, "barrier"),
            span("node", 3.262, 3.262, "recover: fallback"),
            span("node", 3.264, 3.264, "barrier"),
            span("node", 3.265, 3.267, "verify"),
            span("node", 6.300, 6.312, "act: executed"),
            span("node", 6.319, 6.320, "answer partial", failed=True),
        ],
        marks=[
            mark("approval", 3.273, "approval asked"),
            mark("decision", 6.291, "approved by lead at 15:08:18"),
            mark("answer", 6.320, "answer: partial (degraded)", failed=True),
        ],
    )
    lanes = [
        worker(
            "lane-1",
            "billing-1",
            "ok",
            [
                span("dispatch", 1.986, 2.040, "billing ok"),
                span("model", 1.986, 2.007, "turn 1"),
                span("tool", 2.009, 2.027, "orders.refund_status"),
                span("model", 2.028, 2.029, "turn 2"),
            ],
        ),
        worker(
            "lane-2",
            "comms-3",
            "ok",
            [
                span("dispatch", 1.988, 3.255, "comms ok"),
                span("model", 3.247, 3.248, "turn 1"),
                span("tool", 3.248, 3.253, "kb.get_article"),
                span("model", 3.253, 3.254, "turn 2"),
            ],
        ),
        worker(
            "lane-3",
            "policy-2",
            "failed",
            [
                span("dispatch", 1.988, 3.193, "policy failed", failed=True),
                span("model", 3.169, 3.176, "turn 1"),
                span("tool", 3.176, 3.179, "policy.check_policy", failed=True),
                span("model", 3.179, 3.180, "turn 2"),
                span("tool", 3.181, 3.191, "policy.check_policy", failed=True),
            ],
            reason="tool_error",
        ),
        Lane(
            "lane-4",
            "policy-2 · policy · cached fallback",
            "fallback",
            packet_id="policy-2",
            worker="policy",
            marks=[mark("fallback", 3.262, "cached fallback put in")],
        ),
    ]
    link = Link("lane-3", "lane-4", "fallback", "tool_error", "cached policy", T0 + 3.262)
    approval = Wait(T0 + 3.273, T0 + 6.291, "approval", "waiting for approval of a refund")
    return timeline(supervisor, lanes, links=[link], waits=[approval])


def clarified(*, bar_through_the_wait: bool) -> Timeline:
    """A billing packet that asked the customer's order id; the human answered 4.2 s later.
    With `bar_through_the_wait`, the recover node is given the start an older builder
    guessed for it (the checkpoint before the pause), as a drawing must survive it."""
    recover_start = 0.031 if bar_through_the_wait else 4.239
    supervisor = Lane(
        "supervisor",
        "supervisor",
        "supervisor",
        spans=[
            span("node", 0.0, 0.003, "plan · 3 packets"),
            span("node", 0.029, 0.029, "barrier"),
            span("node", recover_start, 4.246, "recover: clarify"),
            span("node", 4.266, 4.266, "barrier"),
            span("node", 4.280, 4.281, "answer complete"),
        ],
        marks=[mark("run", 4.246, "run 2 starts"), mark("answer", 4.281, "answer: complete")],
    )
    lanes = [
        worker(
            "lane-1",
            "billing-1",
            "failed",
            [span("dispatch", 0.008, 0.017, "billing failed"), span("model", 0.008, 0.011, "t1")],
            reason="ambiguous",
        ),
        worker(
            "lane-2",
            "billing-1",
            "ok",
            [
                span("dispatch", 4.254, 4.266, "billing ok"),
                span("model", 4.256, 4.257, "turn 1"),
                span("tool", 4.258, 4.262, "orders.find_order"),
            ],
        ),
    ]
    link = Link("lane-1", "lane-2", "clarify", "ambiguous", "asked the customer", T0 + 4.246)
    wait = Wait(T0 + 0.031, T0 + 4.231, "clarification", "waiting for an answer: which order?")
    return timeline(supervisor, lanes, links=[link], waits=[wait])


def crowded() -> Timeline:
    """Built to provoke collisions: many nodes in a short stretch between two breaks, long
    mark labels right after a break and right before one, links across a break."""
    nodes = [span("node", 0.0, 0.002, "plan · 5 packets")]
    nodes += [
        span("node", 5.0 + i * 0.001, 5.0 + i * 0.001, f"recover: retry {i}") for i in range(8)
    ]
    nodes += [span("node", 9.0, 9.004, "verify: 3 unverified claims, 1 conflict")]
    marks = [
        mark("stop", 0.003, "stopped cleanly (drain); `muster resume` continues"),
        mark("run", 5.0, "run 2 starts (a resume, or an answer to a question)"),
        mark("approval", 5.008, "approval asked: orders.issue_refund of $129.00"),
        mark("decision", 9.0, "approved by supervisor-on-call at 23:59:59"),
        mark("answer", 9.005, "answer: partial (degraded), needs a human"),
    ]
    supervisor = Lane("supervisor", "supervisor", "supervisor", spans=nodes, marks=marks)
    lanes = [
        worker(
            f"lane-{i}",
            f"policy-{i}",
            "failed",
            [
                span("dispatch", 0.001 * i, 5.004, "policy failed", failed=True),
                span("model", 5.0, 5.003, "turn 1"),
            ],
            marks=[mark("fallback", 5.004, "cached fallback put in for this packet")],
        )
        for i in range(1, 4)
    ]
    links = [
        Link(f"lane-{i}", f"lane-{i + 1}", "reassign", "tool_error", "to comms", T0 + 5.004)
        for i in range(1, 3)
    ]
    wait = Wait(T0 + 5.008, T0 + 9.0, "approval", "waiting for approval of a refund")
    return timeline(supervisor, lanes, links=links, waits=[wait])


def picture_of(t: Timeline) -> Picture:
    return Picture(timeline_html(t))


# --- 1. one long step does not fill the axis -------------------------------------------------


def test_the_plan_step_is_the_widest_node_but_no_longer_most_of_the_axis() -> None:
    picture = picture_of(reference_like())
    nodes = sorted(picture.bars("node"), key=lambda b: b[0])
    plan = nodes[0][1] - nodes[0][0]
    plot = PLOT[1] - PLOT[0]
    # A linear axis gave it 81% of the plot; it is the longest step, and still drawn so.
    assert plan <= 0.25 * plot, f"plan is {plan / plot:.0%} of the axis"
    assert all(plan > right - left for left, right, _ in nodes[1:])
    # Where the work is, there is room: the workers' turns and calls, 80 ms of the run,
    # together are drawn wider than the 1.97 s plan.
    work = sum(right - left for left, right, _ in picture.bars("model") + picture.bars("tool"))
    assert work > plan, f"the workers' bars take {work:.0f} px, the plan {plan:.0f} px"
    # The scale is monotone: bars in time order go left to right, and each worker's 21 ms
    # first turn is wider than its 1 ms second one.
    billing = [b for b in picture.bars("model")][:2]
    assert billing[0][0] < billing[1][0]
    assert billing[0][1] - billing[0][0] > billing[1][1] - billing[1][0]
    # The picture says its scale is compressed.
    (note,) = [e.text for e in picture.elements if "axis-note" in e.classes]
    assert "compressed" in note


def test_tick_labels_do_not_crowd_each_other() -> None:
    for t in (reference_like(), clarified(bar_through_the_wait=False), crowded()):
        ticks = sorted(
            (left, right, text)
            for left, right, top, _, text in Picture(timeline_html(t)).label_boxes()
            if top < 18 and left >= PLOT[0] - 1
        )
        assert len(ticks) >= 3
        for a, b in zip(ticks, ticks[1:], strict=False):
            assert a[1] <= b[0], f"tick labels {a} and {b} overlap"
        words = [text for _, _, text in ticks]
        assert len(set(words)) == len(words), f"a tick label twice: {words}"


# --- 2. labels never cross the grey bands -----------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [reference_like, lambda: clarified(bar_through_the_wait=True), crowded],
    ids=["reference", "clarification", "crowded"],
)
def test_no_label_crosses_a_break(make: Any) -> None:
    picture = picture_of(make())
    assert picture.bands(), "the picture has breaks to avoid"
    assert_no_label_on_a_band(picture)


def test_a_long_mark_label_after_a_break_is_whole_and_beside_its_mark() -> None:
    picture = picture_of(reference_like())
    (decision,) = picture.groups("decision")
    (text,) = [e for e in picture.elements if e.tag == "text" and "decision" in e.classes]
    assert text.text == "approved by lead at 15:08:18"  # not shortened: there was room made
    diamond = next(e for e in picture.elements if e.tag == "polygon" and "decision" in e.classes)
    xs = [float(p.split(",")[0]) for p in diamond.attrs["points"].split()]
    (band,) = picture.bands(human=True)
    assert min(xs) > band[1], "the decision's diamond is after the wait's band"
    assert float(text.attrs["x"]) >= max(xs), "its words start right of it"


# --- 3. a human's wait is a break, not a bar ---------------------------------------------------


def human_break(picture: Picture) -> tuple[Element, tuple[float, float, float, float]]:
    (group,) = picture.groups("human")
    (band,) = picture.bands(human=True)
    return group, band


def assert_no_bar_through(picture: Picture, band: tuple[float, float, float, float]) -> None:
    for left, right, rect in picture.bars():
        assert not overlap((left, right), band[:2]), (
            f"a {rect.classes[-2:]} bar at x {left:.0f}-{right:.0f} runs through the wait"
        )


@pytest.mark.parametrize("old_start", [True, False], ids=["guessed-start", "timed"])
def test_a_clarification_wait_is_a_break_with_its_length_and_no_bar(old_start: bool) -> None:
    picture = picture_of(clarified(bar_through_the_wait=old_start))
    group, band = human_break(picture)
    assert group.attrs["data-kind"] == "clarification"
    assert group.attrs["data-wait-seconds"] == "4.2"
    words = [e.text for e in picture.elements if e.tag == "text" and "human" in e.classes]
    assert words == ["⋯ waited 4.2 s for a human"]
    # The axis is broken there: a zig-zag across the column, no axis line through it.
    assert any(e.tag == "polyline" and "human" in e.classes for e in picture.elements)
    for e in picture.elements:
        if e.tag == "line" and "axis" in e.classes and "tick" not in e.classes:
            assert not overlap((float(e.attrs["x1"]), float(e.attrs["x2"])), band[:2])
    assert_no_bar_through(picture, band)
    # The recover node that ran when the human answered starts after the break.
    recover = [b for b in picture.bars("node")][2]
    assert recover[0] >= band[1]
    # The same wait is said in words below the picture.
    assert 'id="waits"' in picture.markup and "waited 4.2 s for a human" in picture.markup


def test_an_approval_wait_is_a_break_however_short() -> None:
    t = reference_like()
    # The lead decided 0.2 s after being asked: less than a quiet stretch needs to be broken.
    t.waits = [Wait(T0 + 3.273, T0 + 3.473, "approval", "waiting for approval")]
    t.supervisor.marks = [
        replace(m, at=T0 + 3.473) if m.kind == "decision" else m for m in t.supervisor.marks
    ]
    t.supervisor.spans = [
        replace(s, start=s.start - 2.818, end=s.end - 2.818) if s.start > T0 + 6 else s
        for s in t.supervisor.spans
    ]
    picture = picture_of(t)
    group, band = human_break(picture)
    assert group.attrs["data-kind"] == "approval" and group.attrs["data-wait-seconds"] == "0.2"
    assert_no_bar_through(picture, band)
