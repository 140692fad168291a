"""The timeline as one self-contained HTML page: the SVG picture (`graph.app.timeline_svg`)
with inline CSS, the text around it and a few lines of JavaScript.

Nothing is fetched when the page is viewed (a Content-Security-Policy forbids it), so the file
can be mailed, attached to a ticket or opened from disk. The script only puts a clicked bar's
details in a panel, and marks the page `data-timeline="ready"` (the browser test reads that
to know the script ran). Below the picture, the same facts as text: the recoveries, the
approvals, the waits for a human, every lane with every step and its duration, and the
answer. Every text is
escaped: ticket and tool text are not ours.
"""

from __future__ import annotations

from datetime import datetime
from html import escape

from graph.app.timeline import Timeline
from graph.app.timeline_axis import duration
from graph.app.timeline_svg import COLOURS, timeline_svg


def timeline_html(timeline: Timeline, *, generated_at: datetime | None = None) -> str:
    """The whole page for `timeline`."""
    generated = (generated_at or datetime.now().astimezone()).strftime("%Y-%m-%d %H:%M:%S %Z")
    svg, height = timeline_svg(timeline)
    status = escape(timeline.status)
    answer = escape(timeline.answer_status or "none")
    notes = "".join(f"<li>{escape(n)}</li>" for n in timeline.notes)
    return f"""<!doctype html>
<html lang="en" data-timeline="static">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy"
  content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>Muster timeline · {escape(timeline.thread_id)}</title>
<style>{_CSS}</style>
</head>
<body data-picture-height="{height}">
<header>
<h1>Thread <code>{escape(timeline.thread_id)}</code></h1>
<p class="request">{escape(timeline.request)}</p>
<p id="outcome" class="outcome {_status_class(timeline)}" data-status="{status}"
  data-answer="{answer}" data-degraded="{str(timeline.degraded).lower()}">
<b>{status}</b> · {escape(timeline.outcome)}</p>
{f'<ul class="notes">{notes}</ul>' if notes else ""}
</header>
<figure>{svg}
<figcaption>{_legend()}</figcaption>
</figure>
<aside id="detail" aria-live="polite">Click a bar or a mark for its details.</aside>
{_recoveries(timeline)}
{_approvals(timeline)}
{_waits(timeline)}
{_lane_table(timeline)}
<footer id="answer" data-answer="{answer}">{_answer_words(timeline)}
<p class="generated">{timeline.runs} run(s) · drawn {escape(generated)} by
<code>muster show {escape(timeline.thread_id)} --html</code></p></footer>
<script>{_SCRIPT}</script>
</body>
</html>
"""


def _status_class(timeline: Timeline) -> str:
    if timeline.status in ("interrupted", "in progress", "new"):
        return "waiting"
    if timeline.answer_status == "complete" and not timeline.degraded:
        return "good"
    return "bad"


# --- the text around the picture ----------------------------------------------------------


def _recoveries(timeline: Timeline) -> str:
    if not timeline.links:
        return ""
    lanes = {lane.key: lane for lane in timeline.workers}
    items = []
    for link in timeline.links:
        source = lanes.get(link.source)
        target = lanes.get(link.target) if link.target else None
        items.append(
            f'<li data-strategy="{escape(link.strategy)}" data-from="{link.source}" '
            f'data-to="{link.target or ""}"><b>{escape(source.title if source else link.source)}'
            f"</b> failed ({escape(link.reason)}) → <b>{escape(link.strategy)}</b> → "
            f"<b>{escape(target.title if target else 'not started yet')}</b>: "
            f"{escape(link.detail)}</li>"
        )
    return f'<section id="recoveries"><h2>Recoveries</h2><ol>{"".join(items)}</ol></section>'


def _approvals(timeline: Timeline) -> str:
    marks = [m for m in timeline.supervisor.marks if m.kind in ("approval", "decision", "waiting")]
    # Each approval once: what a paused thread waits for is the approval already asked.
    asked = {m.detail for m in marks if m.kind == "approval"}
    marks = [m for m in marks if not (m.kind == "waiting" and m.detail in asked)]
    if not marks:
        return ""
    items = "".join(
        f'<li data-kind="{m.kind}" class="{"failed" if m.failed else ""}">'
        f"{escape(datetime.fromtimestamp(m.at).astimezone().strftime('%H:%M:%S'))} "
        f"{escape(m.detail)}</li>"
        for m in marks
    )
    return f'<section id="approvals"><h2>Approvals</h2><ul>{items}</ul></section>'


def _waits(timeline: Timeline) -> str:
    if not timeline.waits:
        return ""
    items = "".join(
        f'<li data-kind="{escape(w.kind)}" data-seconds="{w.seconds:.1f}">'
        f"{escape(datetime.fromtimestamp(w.start).astimezone().strftime('%H:%M:%S'))} "
        f"waited {escape(duration(w.seconds))} for a human ({escape(w.kind)}): "
        f"{escape(w.detail)}</li>"
        for w in timeline.waits
    )
    return f'<section id="waits"><h2>Waits for a human</h2><ul>{items}</ul></section>'


def _lane_table(timeline: Timeline) -> str:
    rows = []
    for lane in timeline.lanes:
        steps = [s for s in lane.spans if s.kind != "dispatch"]
        cells = "".join(
            f'<li class="{s.kind}{" failed" if s.failed else ""}">{escape(s.detail)}'
            f" <span class=ms>{s.duration_ms:.0f} ms</span></li>"
            for s in steps
        )
        rows.append(
            f'<tr data-lane="{lane.key}" data-status="{lane.status}">'
            f"<th>{escape(lane.title)}</th><td class=status>{escape(lane.status)}</td>"
            f"<td>{escape(lane.summary)}<ol>{cells}</ol></td></tr>"
        )
    return (
        '<section id="lanes"><h2>Every lane, every step</h2><table>'
        "<tr><th>lane</th><th>status</th><th>what happened</th></tr>"
        + "".join(rows)
        + "</table></section>"
    )


def _answer_words(timeline: Timeline) -> str:
    reasons = "".join(f"<li>{escape(r)}</li>" for r in timeline.reasons)
    head = f"<h2>The end: {escape(timeline.outcome)}</h2>"
    return head + (f"<ul>{reasons}</ul>" if reasons else "")


def _legend() -> str:
    entries = [
        ("model", "model turn"),
        ("tool", "tool call"),
        ("node", "supervisor node"),
        ("failed", "failed"),
        ("fallback", "fallback / approval asked"),
        ("ok", "approved / answer"),
        ("running", "running / waiting"),
    ]
    keys = [
        f'<span class="key"><i style="background:{COLOURS[k]}"></i>{escape(text)}</span>'
        for k, text in entries
    ]
    keys.append('<span class="key"><i class="human-key"></i>a human\'s wait</span>')
    keys.append('<span class="key"><i class="idle-key"></i>nothing ran</span>')
    return " ".join(keys)


_CSS = f"""
body {{ font: 13px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 16px 24px;
  color: #1f2933; background: #fff; }}
h1 {{ font-size: 18px; margin: 0 0 4px; }} h2 {{ font-size: 14px; margin: 18px 0 6px; }}
.request {{ margin: 0 0 6px; color: #3e4c59; max-width: 1100px; }}
.outcome {{ display: inline-block; padding: 3px 10px; border-radius: 12px; margin: 0; }}
.outcome.good {{ background: #e3f6e8; }} .outcome.bad {{ background: #fdecea; }}
.outcome.waiting {{ background: #e6f0fe; }}
.notes {{ color: #8a4b08; }}
figure {{ margin: 12px 0; }} figcaption {{ margin-top: 4px; }}
.key {{ margin-right: 14px; }}
.key i.human-key {{ background: #e6f0fe; border: 1px solid {COLOURS["running"]}; }}
.key i.idle-key {{ background: #f1f3f5; border: 1px dashed #cbd2d9; }}
.key i {{ display: inline-block; width: 12px; height: 10px;
  margin-right: 4px; border-radius: 2px; vertical-align: -1px; }}
svg text {{ font: 11px system-ui, sans-serif; fill: #1f2933; }}
.axis line {{ stroke: #9aa5b1; }} .axis .tick {{ stroke: #eef1f4; }}
.axis text {{ fill: #616e7c; }}
.break rect {{ fill: #e4e7eb; fill-opacity: 0.35; stroke: #cbd2d9; stroke-dasharray: 3 3; }}
.break text {{ fill: #616e7c; font-style: italic; }}
.break .zigzag {{ fill: none; stroke: #9aa5b1; stroke-width: 1.2; }}
.break.human rect {{ fill: #e6f0fe; fill-opacity: 0.8; stroke: {COLOURS["running"]}; }}
.break.human .zigzag {{ stroke: {COLOURS["running"]}; stroke-width: 1.6; }}
.break.human text {{ fill: #1d4ed8; font-weight: 600; }}
.axis .axis-note {{ fill: #7b8794; font-size: 10px; }}
.lane-bg {{ fill: transparent; stroke: #eef1f4; }}
.lane.supervisor .lane-bg {{ fill: #f8f9fb; }}
.lane-title {{ font-weight: 600; }} .lane-summary {{ fill: #616e7c; font-size: 10.5px; }}
.badge {{ font-weight: 700; font-size: 10px; }}
.badge.failed {{ fill: {COLOURS["failed"]}; }} .badge.fallback {{ fill: #b3541e; }}
.badge.running {{ fill: {COLOURS["running"]}; }} .badge.cut, .badge.pending {{ fill: #7b8794; }}
.span rect {{ cursor: pointer; }}
.span.model rect {{ fill: {COLOURS["model"]}; }} .span.tool rect {{ fill: {COLOURS["tool"]}; }}
.span.node rect {{ fill: {COLOURS["node"]}; }}
.span.failed rect {{ fill: {COLOURS["failed"]}; }}
.span.dispatch rect {{ fill: #f1f5f9; stroke: {COLOURS["ok"]}; stroke-width: 1.2; }}
.span.dispatch.failed rect, .span.dispatch.cut rect {{ fill: #fff5f5;
  stroke: {COLOURS["failed"]}; }}
.span.dispatch.running rect {{ stroke: {COLOURS["running"]}; stroke-dasharray: 4 3; }}
.span.dispatch.cut rect {{ stroke-dasharray: 2 2; }}
.in-bar {{ fill: #fff !important; font-size: 9.5px !important; pointer-events: none; }}
.node-label {{ fill: #3e4c59; font-size: 10.5px; }} .node-label.failed {{ fill: #b42318; }}
.mark, .break.human {{ cursor: pointer; }} .mark text {{ font-size: 10.5px; }}
.mark.failed text {{ fill: #b42318; font-weight: 600; }}
.mark.decision text, .mark.answer text, .mark.waiting text {{ font-weight: 600; }}
.link path {{ fill: none; stroke: #b3541e; stroke-width: 1.6; }}
.link rect {{ fill: #fff4e5; stroke: #b3541e; }} .link text {{ fill: #8a3c0f; font-size: 10px; }}
#detail {{ border: 1px solid #cbd2d9; border-radius: 6px; padding: 6px 10px; max-width: 1180px;
  background: #f8f9fb; min-height: 1.4em; }}
table {{ border-collapse: collapse; max-width: 1200px; }}
td, th {{ border-top: 1px solid #e4e7eb; padding: 4px 8px; text-align: left;
  vertical-align: top; }}
td ol {{ margin: 2px 0; padding-left: 18px; color: #3e4c59; }}
li.failed {{ color: #b42318; }} .ms {{ color: #7b8794; }}
footer {{ margin-top: 18px; }} .generated {{ color: #7b8794; }}
"""

_SCRIPT = """
(function () {
  var panel = document.getElementById('detail');
  var show = function (el) { panel.textContent = el.getAttribute('data-detail'); };
  document.querySelectorAll('#timeline [data-detail]').forEach(function (el) {
    el.setAttribute('tabindex', '0');
    el.addEventListener('click', function () { show(el); });
    el.addEventListener('keydown', function (e) { if (e.key === 'Enter') { show(el); } });
  });
  document.documentElement.setAttribute('data-timeline', 'ready');
})();
"""
