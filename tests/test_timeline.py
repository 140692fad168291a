"""`muster show THREAD --html`: the timeline page, rendered by a real headless Chromium.

The reference run (the demo ticket with the policy server broken) is run once for the
module, in-process on real MCP servers and a real SQLite store: it pauses for the refund's
approval, is drawn, is approved, and is drawn again. Chromium (`--dump-dom`) then loads each
page from disk, runs its script and serialises the DOM it built; the checks read that DOM:
the lanes, the failed policy dispatches with their reasons, the retry and fallback links,
the approval (who and when) and the answer's status. A batch of two tickets, one held
mid-run by a gated model, shows a running thread and a batch thread draw too.

Chromium is Debian's `chromium` (scripts/ensure_chromium.sh installs it when missing).
Without it these browser tests skip with one line, unless `CI` or `MUSTER_REQUIRE_CHROMIUM`
is set: then they fail.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import struct
import subprocess
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.types import Command

from checkpoints.threads import thread_config
from graph.app.batch_tickets import batch_thread_id
from graph.app.cli import main
from graph.app.runtime import open_runtime, open_store, stream_run
from graph.app.timeline import Lane, Mark, Span, Timeline
from graph.app.timeline_build import thread_timeline
from graph.app.timeline_html import timeline_html
from graph.trace import read_trace, trace_path
from tests.conftest import DEMO_TICKET, HANG_TIMEOUT_S, MusterEnv
from workers.local_models import OfflineChatModel
from workers.models import offline_factory

REFERENCE_TICKET = "Customer says order #12345 was charged twice. What happened and what can we do?"
"""`make demo`'s ticket; with the policy server broken, policy is retried, then replaced by
the cached policy snapshot, and the refund waits for approval."""
THREAD = "ref-timeline"


# --- the reference run, shared by the module ------------------------------------------------


@dataclass(frozen=True)
class ReferenceRun:
    """The module's reference run and its two pictures."""

    root: Path
    db: Path
    paused_html: Path
    """Drawn while the refund waited for approval."""
    done_html: Path
    """Drawn after `lead` approved it and the thread finished."""


def reference_env(root: Path, monkeypatch: pytest.MonkeyPatch, *, policy: str) -> Path:
    """Point servers, stores and traces under `root` (as `muster_env` does) with the policy
    server in `policy` mode; returns the checkpoint database."""
    db = root / "checkpoints.sqlite"
    monkeypatch.setenv("MUSTER_ORDERS_DB", str(root / "orders.sqlite"))
    monkeypatch.setenv("MUSTER_CALL_LOG", str(root / "calls.jsonl"))
    monkeypatch.setenv("MUSTER_TRACE_DIR", str(root / "traces"))
    monkeypatch.setenv("MUSTER_DB", str(db))
    monkeypatch.setenv("MUSTER_APPROVAL_SECRET", "test-secret-" + root.name)
    monkeypatch.setenv("MUSTER_POLICY_MODE", policy)
    return db


async def draw(graph: Any, thread: str, page: Path) -> None:
    """What `muster show THREAD --html PAGE` writes, from inside a running event loop."""
    config = thread_config(thread)
    history = [s async for s in graph.aget_state_history(config)]
    snapshot = await graph.aget_state(config)
    html = timeline_html(thread_timeline(thread, snapshot, history))
    await asyncio.to_thread(page.write_text, html, encoding="utf-8")


async def run_reference(db: Path, thread: str, *, paused_page: Path | None = None) -> None:
    """The reference ticket on `thread` up to its approval (drawn to `paused_page`), then
    approved by `lead` and run to its end: one runtime, so the servers start once."""
    async with open_runtime(db=db) as runtime:
        await stream_run(runtime, thread, {"request": REFERENCE_TICKET})
        if paused_page is not None:
            await draw(runtime.graph, thread, paused_page)
        snapshot = await runtime.graph.aget_state(thread_config(thread))
        (pending,) = snapshot.interrupts
        decision = {"approved": True, "digest": pending.value["digest"], "by": "lead", "note": ""}
        await stream_run(runtime, thread, Command(resume={pending.id: decision}))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReferenceRun]:
    root = tmp_path_factory.mktemp("timeline")
    with pytest.MonkeyPatch.context() as monkeypatch:
        db = reference_env(root, monkeypatch, policy="broken")
        paused, done = root / "paused.html", root / "done.html"
        asyncio.run(run_reference(db, THREAD, paused_page=paused))
        assert main(["show", THREAD, "--html", str(done)]) == 0  # the CLI itself
        yield ReferenceRun(root=root, db=db, paused_html=paused, done_html=done)


# --- the browser -----------------------------------------------------------------------------


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium with a profile of its own (parallel tests share no profile)."""
    exe = shutil.which("chromium")
    if exe is None:
        why = "chromium is not installed (scripts/ensure_chromium.sh installs it)"
        if os.environ.get("CI") or os.environ.get("MUSTER_REQUIRE_CHROMIUM"):
            pytest.fail(f"{why}; CI/MUSTER_REQUIRE_CHROMIUM is set, so the browser tests must run")
        pytest.skip(why)
    with tempfile.TemporaryDirectory(prefix="muster-chromium-") as profile:
        done = subprocess.run(
            [
                exe,
                "--headless",
                "--no-sandbox",  # root in a container has no user namespace to sandbox in
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                f"--user-data-dir={profile}",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=HANG_TIMEOUT_S,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


class Dom(HTMLParser):
    """The elements of a serialised DOM, each as its attributes plus `tag` and `text` (all
    the text inside it), in document order."""

    VOID = {"meta", "br", "img", "input", "link", "hr", "col", "source", "wbr"}

    def __init__(self, markup: str) -> None:
        super().__init__()
        self.elements: list[dict[str, str]] = []
        self._open: list[dict[str, str]] = []
        self.feed(markup)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = {"tag": tag, "text": "", **{k: v or "" for k, v in attrs}}
        self.elements.append(element)
        if tag not in self.VOID:
            self._open.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append({"tag": tag, "text": "", **{k: v or "" for k, v in attrs}})

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            if self._open.pop()["tag"] == tag:
                break

    def handle_data(self, data: str) -> None:
        for element in self._open:
            element["text"] += data

    def find(self, **attrs: str) -> list[dict[str, str]]:
        """Elements whose attributes equal `attrs` (`class_` stands for `class`, matched as
        one of the element's classes; `_` in a name stands for `-`)."""
        found = []
        for element in self.elements:
            ok = True
            for key, want in attrs.items():
                if key == "class_":
                    ok = want in element.get("class", "").split()
                else:
                    ok = element.get(key.replace("_", "-")) == want
                if not ok:
                    break
            if ok:
                found.append(element)
        return found

    def one(self, **attrs: str) -> dict[str, str]:
        found = self.find(**attrs)
        assert len(found) == 1, f"{len(found)} elements match {attrs}"
        return found[0]


def rendered(page: Path) -> Dom:
    """The DOM Chromium builds from `page` (its script has run)."""
    return Dom(chromium("--dump-dom", page.resolve().as_uri()).stdout)


def lane_of(dom: Dom, packet: str, attempt: int) -> dict[str, str]:
    return dom.one(tag="g", class_="worker", data_packet=packet, data_attempt=str(attempt))


def check_reference_lanes(dom: Dom) -> None:
    """What both pictures of the reference run show: the supervisor above the dispatches,
    policy failing on its broken server with the reason, and recovery's fallback (a failing
    server is retried at one layer, the worker's, never again by recovery)."""
    assert dom.one(tag="html")["data-timeline"] == "ready"  # its script ran in Chromium
    assert dom.one(tag="g", data_lane="supervisor")["data-status"] == "supervisor"
    assert lane_of(dom, "billing-1", 1)["data-status"] == "ok"
    assert lane_of(dom, "comms-3", 1)["data-status"] == "ok"
    first = lane_of(dom, "policy-2", 1)
    assert (first["data-status"], first["data-reason"]) == ("failed", "tool_error")
    assert "FAILED tool_error" in first["text"]
    assert not dom.find(tag="g", class_="worker", data_packet="policy-2", data_attempt="2")
    fallback = dom.one(tag="g", class_="worker", data_packet="policy-2", data_status="fallback")
    assert "cached policy snapshot" in fallback["text"]
    # Supervisor above every worker lane; lanes in start order, the fallback last.
    order = [e.get("data-lane") for e in dom.find(tag="g", class_="lane")]
    assert order[0] == "supervisor"
    assert order.index(first["data-lane"]) < order.index(fallback["data-lane"])
    assert order[-1] == fallback["data-lane"]
    # Each model turn and tool call is a bar with its duration; policy's calls failed.
    turns = [
        e for e in dom.find(tag="g", class_="span", data_kind="model") if "model turn" in e["text"]
    ]
    assert len(turns) >= 5 and all(float(t["data-duration-ms"]) > 0 for t in turns)
    failed_calls = dom.find(tag="g", class_="failed", data_kind="tool")
    assert len(failed_calls) == 2 and all("policy.check_policy" in c["text"] for c in failed_calls)
    # Recovery links the failed dispatch to what replaced it; no retry of the broken server.
    assert not dom.find(tag="g", class_="link", data_strategy="retry")
    fell_back = dom.one(tag="g", class_="link", data_strategy="fallback")
    assert (fell_back["data-from"], fell_back["data-to"]) == (
        first["data-lane"],
        fallback["data-lane"],
    )
    recoveries = dom.one(tag="section", id="recoveries")["text"]
    assert "→ retry →" not in recoveries
    assert "failed (tool_error) → fallback → policy-2 · policy · cached fallback" in recoveries


@pytest.mark.integration
def test_the_paused_reference_run_draws_its_recoveries_and_what_it_waits_for(
    reference: ReferenceRun,
) -> None:
    dom = rendered(reference.paused_html)
    check_reference_lanes(dom)
    outcome = dom.one(tag="p", id="outcome")
    assert outcome["data-status"] == "interrupted"
    assert (
        "waiting for approval of orders.issue_refund of $129.00 on order 12345" in (outcome["text"])
    )
    asked = dom.one(tag="g", class_="mark", data_kind="approval")
    assert "orders.issue_refund of $129.00" in asked["data-detail"]
    assert dom.find(tag="g", class_="mark", data_kind="waiting")
    assert not dom.find(tag="g", class_="mark", data_kind="decision")
    # Still waiting: no break for the wait yet (its end is not known), the mark says it.
    assert not dom.find(tag="g", class_="human")


@pytest.mark.integration
def test_the_finished_reference_run_shows_who_approved_and_the_answer(
    reference: ReferenceRun,
) -> None:
    dom = rendered(reference.done_html)
    check_reference_lanes(dom)
    decided = dom.one(tag="g", class_="mark", data_kind="decision")
    assert decided["text"].startswith("approved by lead at ")
    assert "approved by lead" in decided["data-detail"]
    act = [e for e in dom.find(tag="g", class_="span", data_kind="node") if "act" in e["text"]]
    assert any("executed" in e["text"] for e in act)
    # The time the lead took is a break in the axis, not a bar (test_timeline_geometry.py
    # checks the geometry).
    waited = dom.one(tag="g", class_="human", data_kind="approval")
    assert "waited" in waited["text"] and "for a human" in waited["text"]
    assert "orders.issue_refund of $129.00" in waited["data-detail"]
    answer = dom.one(tag="g", class_="mark", data_kind="answer")
    assert answer["text"].startswith("answer: partial (degraded)")
    outcome = dom.one(tag="p", id="outcome")
    assert (outcome["data-status"], outcome["data-answer"], outcome["data-degraded"]) == (
        "done",
        "partial",
        "true",
    )
    assert "replaced by the cached policy snapshot" in dom.one(tag="footer", id="answer")["text"]

    # The screenshot command of docs/operations.md, on the same page: a PNG the size asked
    # for, not blank.
    shot = reference.root / "timeline.png"
    height = int(dom.one(tag="body")["data-picture-height"]) + 420
    chromium(
        "--hide-scrollbars",
        f"--window-size=1280,{height}",
        f"--screenshot={shot}",
        reference.done_html.resolve().as_uri(),
    )
    width, tall, colours = png_facts(shot.read_bytes())
    assert (width, tall) == (1280, height)
    assert colours > 20


def png_facts(data: bytes) -> tuple[int, int, int]:
    """A PNG's width, height and how many distinct byte values its pixel data holds (a
    blank page has a handful)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    chunks, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        if kind == b"IDAT":
            chunks.append(data[offset + 8 : offset + 8 + length])
        offset += 12 + length
    return width, height, len(set(zlib.decompress(b"".join(chunks))))


# --- a running thread, in a batch ------------------------------------------------------------


class GatedModel(OfflineChatModel):
    """The offline model, but a second turn about order 12345 waits for the test's gate:
    that ticket's workers stay mid-run (one turn and its tool calls done) until it opens."""

    gate: Any = None
    """An asyncio.Event, set by the test."""

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Any:
        later_turn = any(isinstance(m, AIMessage) for m in messages)
        if later_turn and any("12345" in str(m.content) for m in messages):
            await self.gate.wait()
        return await super()._agenerate(messages, stop, run_manager, **kwargs)


async def until(condition: Callable[[], Any], what: str) -> None:
    """Wait for `condition` on the event loop (the run goes on meanwhile)."""
    deadline = time.monotonic() + HANG_TIMEOUT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"no sign of {what} after {HANG_TIMEOUT_S:g}s")
        await asyncio.sleep(0.02)


def traced(thread: str, **fields: Any) -> bool:
    return any(
        all(event.get(k) == v for k, v in fields.items())
        for event in read_trace(trace_path(thread))
    )


@pytest.mark.integration
async def test_a_running_batch_thread_and_a_finished_one_each_draw_their_own_lanes(
    muster_env: MusterEnv,
) -> None:
    gate = asyncio.Event()
    gated = GatedModel(gate=gate)
    offline = offline_factory()
    batch = muster_env.root / "tickets.jsonl"
    running, finished = batch_thread_id(batch, "t1"), batch_thread_id(batch, "t2")
    async with open_runtime(
        db=muster_env.checkpoint_db,
        models=lambda worker: gated if worker == "policy" else offline(worker),
    ) as runtime:
        # As `muster batch` runs tickets: one runtime, a trace per thread, side by side.
        held = asyncio.create_task(
            stream_run(
                runtime,
                running,
                {"request": REFERENCE_TICKET},
                services=runtime.for_thread(running),
            )
        )
        await stream_run(
            runtime, finished, {"request": DEMO_TICKET}, services=runtime.for_thread(finished)
        )
        await until(
            lambda: (
                traced(running, kind="tool", packet_id="policy-2")
                and traced(running, node="dispatch", packet_id="billing-1")
            ),
            "policy mid-run and billing reported",
        )
        async with open_store(muster_env.checkpoint_db) as (graph, _):
            pictures = {}
            for thread in (running, finished):
                config = thread_config(thread)
                history = [s async for s in graph.aget_state_history(config)]
                snapshot = await graph.aget_state(config)
                pictures[thread] = thread_timeline(thread, snapshot, history)
        assert not held.done()
        gate.set()
        await held

    now = pictures[running]
    assert now.status == "in progress" and now.answer_status is None
    lanes = {lane.packet_id: lane for lane in now.workers}
    assert lanes["policy-2"].status == "running"
    assert [s.kind for s in lanes["policy-2"].spans][:3] == ["dispatch", "model", "tool"]
    assert lanes["billing-1"].status == "ok"
    page = timeline_html(now)
    assert 'data-status="in progress"' in page and 'data-status="running"' in page

    done = pictures[finished]
    assert done.status == "done" and done.answer_status == "complete"
    assert {lane.status for lane in done.workers} == {"ok"}
    # Each thread's picture holds its own lanes only, though they ran side by side.
    assert len(now.workers) == 3 and len(done.workers) == 3 and not done.links


# --- the page on its own -------------------------------------------------------------------


def test_the_page_is_self_contained_escapes_what_it_shows_and_breaks_long_waits() -> None:
    hostile = '<script>alert("ticket")</script><img src="http://example.com/x.png">'
    start = 1_800_000_000.0
    lane = Lane(
        key="lane-1",
        title="billing-1 · billing",
        status="failed",
        summary=f"failed (tool_error): {hostile}",
        packet_id="billing-1",
        worker="billing",
        attempt=1,
        reason="tool_error",
        spans=[
            Span(start, start + 0.2, "dispatch", "billing failed", failed=True),
            Span(start, start + 0.05, "model", "turn 1", detail="model turn 1: tool_calls"),
            Span(start + 90, start + 90.1, "tool", "orders.find_order", failed=True),
        ],
    )
    supervisor = Lane(
        key="supervisor",
        title="supervisor",
        status="supervisor",
        marks=[Mark(start + 90.2, "answer", "answer: partial", hostile, failed=True)],
    )
    page = timeline_html(
        Timeline(
            thread_id="t-1",
            request=hostile,
            status="done",
            outcome="answer: partial",
            answer_status="partial",
            degraded=True,
            reasons=[hostile],
            supervisor=supervisor,
            workers=[lane],
            links=[],
        )
    )
    assert "<script>alert" not in page and "<img" not in page
    assert "&lt;script&gt;alert(&quot;ticket&quot;)&lt;/script&gt;" in page
    # Nothing to fetch at view time (no element names a source), and the policy forbids it.
    assert "default-src 'none'" in page
    dom = Dom(page)
    assert not [e for e in dom.elements if {"src", "href"} & e.keys()]
    assert [e["tag"] for e in dom.elements].count("script") == 1
    # 89.8 s of quiet becomes a break, not 99% of the width.
    assert 'class="break" data-seconds="89.8"' in page
