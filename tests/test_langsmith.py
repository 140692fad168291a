"""LangSmith tracing by its usual environment variables: a ticket run with
`LANGSMITH_TRACING=true` sends its runs (the graph, its nodes, the model calls) to
`LANGSMITH_ENDPOINT`, here a loopback HTTP server standing in for LangSmith."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from langchain_core.tracers.langchain import wait_for_all_tracers
from langsmith import run_trees, utils

from graph.app.runtime import open_runtime, stream_run
from tests.conftest import MusterEnv
from tests.test_actions import REFUND_TICKET


class Received:
    """What the stand-in endpoint was sent: each request's method, path and body."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, bytes]] = []
        self.lock = threading.Lock()

    def text(self) -> str:
        """Every POSTed/PATCHed body, decompressed where it was compressed, as text."""
        with self.lock:
            bodies = [body for method, _, body in self.requests if method in ("POST", "PATCH")]
        texts = []
        for body in bodies:
            if body[:2] == b"\x1f\x8b":
                body = gzip.decompress(body)
            elif body[:4] == b"\x28\xb5\x2f\xfd":  # zstd
                import zstandard

                body = zstandard.ZstdDecompressor().decompressobj().decompress(body)
            texts.append(body.decode("utf-8", "replace"))
        return "\n".join(texts)


def _handler(received: Received) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self, payload: dict[str, Any]) -> None:
            body = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _record(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with received.lock:
                received.requests.append((self.command, self.path, body))
            self._answer({})

        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            with received.lock:
                received.requests.append(("GET", self.path, b""))
            self._answer({})  # /info: no special capabilities

        do_POST = _record  # noqa: N815
        do_PATCH = _record  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            pass

    return Handler


@pytest.fixture
def langsmith_endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[Received]:
    received = Received()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(received))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("LANGSMITH_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv("LANGSMITH_API_KEY", "dummy")
    monkeypatch.setenv("LANGSMITH_PROJECT", "muster-test")
    # LangSmith reads its environment once per process (cached) and keeps one client: start
    # from a clean slate, and leave one for the tests after this.
    monkeypatch.setattr(run_trees, "_CLIENT", None)
    utils.get_env_var.cache_clear()
    utils.get_tracer_project.cache_clear()
    try:
        yield received
    finally:
        utils.get_env_var.cache_clear()
        utils.get_tracer_project.cache_clear()
        server.shutdown()
        server.server_close()


@pytest.mark.integration
async def test_a_ticket_sends_its_runs_to_the_langsmith_endpoint(
    muster_env: MusterEnv, langsmith_endpoint: Received
) -> None:
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        await stream_run(runtime, "langsmith-refund", {"request": REFUND_TICKET})
    wait_for_all_tracers()  # the client's own flush: every queued run is sent on return

    sent = langsmith_endpoint.text()
    posted = [path for method, path, _ in langsmith_endpoint.requests if method == "POST"]
    assert any(path.startswith("/runs") for path in posted), posted
    assert '"muster"' in sent  # the graph's run
    for node in ("plan", "dispatch", "collect", "verify", "approve"):
        assert f'"{node}"' in sent, node
    assert "OfflineChatModel" in sent and '"llm"' in sent  # a model call, as a chat model run
    assert "langsmith-refund" in sent  # the thread id travels in the runs' metadata
