"""What the CLI prints: counts that read right, columns that line up, a thread list with a
header, and a paused run that says what it waits for (with the digest a script needs)."""

from __future__ import annotations

import io
import json

import pytest

from checkpoints.threads import ThreadInfo, thread_config
from graph.app.printable import plural
from graph.app.progress import Progress
from graph.app.render import pending_approvals, print_result, waiting_for
from graph.app.render_threads import REQUEST_COLUMN, print_thread, print_threads
from graph.app.runtime import open_runtime, stream_run
from tests.conftest import MusterEnv
from tests.test_actions import REFUND_12345, REFUND_TICKET
from workers.contracts import Report


def test_counts_read_right() -> None:
    assert plural(1, "finding") == "1 finding"
    assert plural(0, "finding") == "0 findings"
    assert plural(3, "packet") == "3 packets"


def test_piped_progress_lines_keep_the_worker_column_aligned() -> None:
    out = io.StringIO()
    progress = Progress(out, hub=None)  # reports need no hub
    ok = Report(packet_id="billing-1", worker="billing", objective="o", status="ok")
    failed = Report(
        packet_id="policy-2", worker="policy", objective="o", status="failed", reason="timeout"
    )
    progress("dispatch", {"reports": [ok, failed]})
    first, second = out.getvalue().splitlines()
    assert first.index("billing") == second.index("policy")
    assert "0 findings" in first and "steps" in first


def test_threads_have_a_header_and_long_requests_end_in_an_ellipsis(
    capsys: pytest.CaptureFixture[str],
) -> None:
    long = "Order #12345 " + "was charged twice " * 10
    infos = [
        ThreadInfo("t-1", "done", "2026-12-01T01:02:03.456", "short one", "complete", []),
        ThreadInfo("t-long-id", "interrupted", "2026-12-01T01:02:04", long, None, ["approval"]),
    ]
    print_threads(infos, as_json=False)
    header, first, second = capsys.readouterr().out.splitlines()
    assert header.split() == ["THREAD", "STATUS", "ANSWER", "UPDATED", "REQUEST"]
    assert header.index("STATUS") == first.index("done") == second.index("interrupted")
    assert second.endswith("… [waits: approval]")
    assert len(second.split("  ")[-1].removesuffix(" [waits: approval]")) <= REQUEST_COLUMN


def test_an_approval_wait_names_the_action_amount_order_and_digest() -> None:
    line = waiting_for(
        {
            "kind": "approval",
            "tool": "orders.issue_refund",
            "args": REFUND_12345,
            "digest": "ab" * 32,
        }
    )
    assert line == (
        "waiting for approval of orders.issue_refund of $129.00 on order 12345, digest abababababab"
    )
    assert waiting_for({"kind": "clarification", "question": "Which order?"}) == (
        "waiting for an answer: Which order?"
    )


@pytest.mark.integration
async def test_a_paused_run_prints_and_returns_what_waits_with_its_digest(
    muster_env: MusterEnv, capsys: pytest.CaptureFixture[str]
) -> None:
    thread = "render-paused"
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        values = await stream_run(runtime, thread, {"request": REFUND_TICKET})
        snapshot = await runtime.graph.aget_state(thread_config(thread))
        (interrupt,) = snapshot.interrupts
    (pending,) = pending_approvals(values, thread)
    # The digest a script gets is the one the graph asks a human to approve.
    assert pending["digest"] == interrupt.value["digest"]
    assert pending["args"] == REFUND_12345

    print_result(thread, values, waiting=True, as_json=True)
    payload = json.loads(capsys.readouterr().out)
    assert payload["pending_approvals"] == [pending]

    print_result(thread, values, waiting=True, as_json=False)
    text = capsys.readouterr().out
    # The last line says what waits and the command that answers it, bound to the digest.
    assert text.splitlines()[-1].startswith(
        f"waiting for approval of orders.issue_refund of $129.00 on order 12345, digest "
        f"{pending['digest'][:12]}; approve with: muster approve {thread} "
        f"--digest {pending['digest'][:12]} --by NAME (NAME: "
    )
    assert text.splitlines()[-1].endswith("(--reject to refuse)")

    # `muster show` on the paused thread: the request, the pending refund, and the answer so
    # far that `run` printed when it paused.
    print_thread(thread, snapshot, [], [])
    shown = capsys.readouterr().out
    assert f"request: {REFUND_TICKET}" in shown
    assert "pending approval: orders.issue_refund" in shown
    so_far = shown.split("answer so far (waiting for a human):\n", 1)[1]
    assert so_far.startswith(f"Request: {REFUND_TICKET}") and "What happened:" in so_far


def test_a_request_cut_on_a_space_still_ends_in_an_ellipsis(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # `describe_threads` keeps the first REQUEST_COLUMN characters; here the last one is a
    # space, which joining the words drops: the line was still cut, so it ends in "…".
    request = "Customer says order #12345 was charged twice. What happened and what can we do?"
    kept = " ".join(request.split())[:REQUEST_COLUMN]
    assert kept.endswith(" ")
    print_threads(
        [ThreadInfo("t-1", "done", "2026-12-01T01:02:03", kept, "partial", [])], as_json=False
    )
    line = capsys.readouterr().out.splitlines()[1]
    assert line.endswith("What happene…"), line
    assert len(line.split("  ")[-1]) <= REQUEST_COLUMN
    # A request that fits is shown whole, with no ellipsis.
    print_threads(
        [ThreadInfo("t-2", "done", "2026-12-01T01:02:03", "short one", "ok", [])], as_json=False
    )
    assert capsys.readouterr().out.splitlines()[1].endswith("short one")
