"""Serving a FastMCP server over stdio on the event loop's own pipes, not on threads.

The SDK's `stdio_server()` wraps stdin and stdout with `anyio.wrap_file`, so every line read
and every write and flush is handed to a worker thread and back: about twelve thread hops
per tool call, most of a kb search's CPU in the server (0.92 ms a call, of which the FTS
query is 0.13 ms; bench/fanout.py's N=200 fan-out waits on it). `stdio_server()` takes the
two streams as arguments, so this module gives it the same lines through asyncio's pipe
transports instead (`connect_read_pipe`, `connect_write_pipe`): no threads, the same
protocol, the same end on EOF. Everything else is the SDK's: its transport framing, its
session, the server's initialization options (as `FastMCP.run_stdio_async` passes them).

When stdin or stdout is no pipe, socket or character device (a regular file, say), asyncio
cannot watch it; the server then runs on the SDK's own transport, as before.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from typing import Any

import anyio
from mcp.server.fastmcp import FastMCP
from mcp.server.stdio import stdio_server

LINE_LIMIT = 64 * 1024 * 1024
"""The longest message line read (asyncio's default, 64 KiB, is below what a tool call's
arguments may hold); the SDK's own reader has no limit."""


class _Lines:
    """stdin as the async iterator of text lines that `stdio_server()` reads."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class _Writer:
    """stdout as the `write`/`flush` pair `stdio_server()` calls; `flush` waits while the
    client is behind (the pipe's flow control), never blocking the loop."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


def _watchable(fd: int) -> bool:
    """Whether asyncio's pipe transports accept `fd`."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


async def _serve(mcp: FastMCP[Any]) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout.buffer
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    streams: Any = (_Lines(reader), _Writer(writer))  # duck-typed as anyio.AsyncFile[str]
    async with stdio_server(*streams) as (read_stream, write_stream):
        # What `FastMCP.run_stdio_async` runs, on our streams (it takes none of its own): a
        # copy, on the private `_mcp_server`, pinned and checked by tests/test_pinned_internals.py.
        server = mcp._mcp_server
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(mcp: FastMCP[Any]) -> None:
    """Serve `mcp` over stdin/stdout until stdin closes."""
    if not (_watchable(sys.stdin.fileno()) and _watchable(sys.stdout.fileno())):
        mcp.run()
        return
    anyio.run(_serve, mcp)
