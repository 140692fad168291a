"""Data protection end to end (issue 28's target): with encryption and redaction on, a
support ticket that carries the customer's e-mail and phone, about an order whose record
names the customer, runs to its approval and its refund; then every byte the run wrote is
read (the SQLite store with its -wal and -shm files, the traces, the timeline page, the
OpenTelemetry export a loopback collector received, every log line at DEBUG) and none holds
the e-mail, the phone or the name. The run itself saw them all (the finding names the
customer; the reply greets them), and `read_trace` still opens the originals for replay.

Real parts: the MCP servers as subprocesses, SQLite, the OTLP/HTTP exporter of the official
SDK posting to a collector on loopback."""

from __future__ import annotations

import base64
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from langgraph.types import Command

from checkpoints.threads import thread_config
from graph import telemetry
from graph.app.runtime import open_runtime, stream_run
from graph.app.timeline_build import thread_timeline
from graph.app.timeline_html import timeline_html
from graph.trace import read_trace, trace_path
from tests.conftest import MusterEnv

EMAIL = "r.okafor@example.com"
PHONE = "+44 20 7946 0958"
NAME = "Okafor"  # the orders data's "R. Okafor"
TICKET = (
    "Customer says order #12345 was charged twice. What happened and what can we do? "
    f"Write to {EMAIL} or call {PHONE}."
)
NEEDLES = (
    b"okafor",
    EMAIL.encode(),
    b"example.com",
    PHONE.encode(),
    b"7946 0958",
    b"2079460958",
)
"""What must not be found (bytes lowercased): the name in any case, the address, the phone
as written and its digits."""


class Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP collector on loopback that keeps every request body."""

    bodies: list[bytes] = []
    lock = threading.Lock()

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with Collector.lock:
            Collector.bodies.append(body)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def collector(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    Collector.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "muster-data-protection")
    telemetry.use_provider(None)
    try:
        yield Collector.bodies
    finally:
        telemetry.shutdown(budget_ms=0)
        telemetry.use_provider(None)
        server.shutdown()
        server.server_close()


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    """Every log record of the process at DEBUG, with tracebacks, in a file."""
    path = tmp_path / "muster.log"
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield path
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        handler.close()


def _found(files: list[Path]) -> dict[str, list[str]]:
    leaks: dict[str, list[str]] = {}
    for path in files:
        data = path.read_bytes().lower()
        hits = [n.decode() for n in NEEDLES if n.lower() in data]
        if hits:
            leaks[str(path)] = hits
    return leaks


def _check_everything_written(
    env: MusterEnv, thread: str, html: str, page: Path, bodies: list[bytes], log_file: Path
) -> None:
    """Write the page and the collector's export to files, then read every byte written."""
    page.write_text(html, encoding="utf-8")
    assert "[email]" in html  # the request, as the page shows it
    assert bodies, "the collector received no spans"
    otel = env.root / "otel-export.bin"
    otel.write_bytes(b"".join(bodies))
    assert b"muster-data-protection" in otel.read_bytes()  # OTEL_SERVICE_NAME, honoured
    assert b"invoke_workflow muster" in otel.read_bytes()

    db = env.checkpoint_db
    store = [p for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists()]
    traces = [p for p in sorted(env.trace_dir.rglob("*")) if p.is_file()]
    assert db in store and trace_path(thread) in traces
    logged = log_file.read_text(encoding="utf-8")
    assert "answer written:" in logged and "[name]" in logged  # the line, redacted

    written = [*store, *traces, page, otel, log_file]
    assert _found(written) == {}


@pytest.mark.integration
async def test_nothing_a_run_writes_holds_the_customers_email_phone_or_name(
    muster_env: MusterEnv,
    monkeypatch: pytest.MonkeyPatch,
    collector: list[bytes],
    log_file: Path,
) -> None:
    monkeypatch.setenv("MUSTER_ENCRYPTION_KEYS", f"k1:{base64.b64encode(bytes(32)).decode()}")
    monkeypatch.delenv("MUSTER_REDACT", raising=False)
    thread = "protected-1"
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        paused = await stream_run(runtime, thread, {"request": TICKET})
        (pending,) = (await runtime.graph.aget_state(thread_config(thread))).interrupts
        decision = {"approved": True, "digest": pending.value["digest"], "by": "alice"}
        values = await stream_run(runtime, thread, Command(resume={pending.id: decision}))
        config = thread_config(thread)
        snapshot = await runtime.graph.aget_state(config)
        history = [s async for s in runtime.graph.aget_state_history(config)]
        logging.getLogger("muster.test").info("answer written: %s", values["answer"].text)

    # The run saw the customer: the order's finding names them, the reply greets them, the
    # refund ran; the store holds it all (encrypted), as it read it back above.
    observations = " ".join(f.observation for r in paused["reports"] for f in r.findings)
    assert "R. Okafor" in observations and EMAIL in values["request"]
    assert "Okafor" in values["answer"].text
    assert "executed" in [a.status for a in values["actions"]]

    page = muster_env.root / f"{thread}.timeline.html"
    timeline = thread_timeline(thread, snapshot, history)
    assert telemetry.shutdown() == "flushed"  # what the end of a command waits for
    html = timeline_html(timeline)
    _check_everything_written(muster_env, thread, html, page, collector, log_file)

    # The trace's originals are sealed under the checkpoint keys, not lost: replay reads them.
    opened = " ".join(str(e) for e in read_trace(trace_path(thread)))
    assert "R. Okafor" in opened
    monkeypatch.setenv("MUSTER_ENCRYPTION_KEYS", f"k2:{base64.b64encode(bytes([2]) * 32).decode()}")
    assert "R. Okafor" not in " ".join(str(e) for e in read_trace(trace_path(thread)))
