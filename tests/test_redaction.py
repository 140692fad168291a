"""The redaction policy (workers/redaction.py) on its labelled corpus, and where it applies:
trace lines (redacted, originals sealed for replay), log records, audit rows (SQLite; the
PostgreSQL audit is in tests/test_postgres.py), the switch."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from checkpoints.audit import AuditLog
from graph import trace_seal
from graph.trace import TraceWriter, read_trace
from workers import redaction
from workers.redaction import Redactor, luhn_ok

CASES = Path(__file__).parent / "fixtures" / "redaction_cases.jsonl"
NAMES = ("R. Okafor", "G. O'Neill", "K. Sørensen")
"""The customers the corpus's tool results name, as support's orders server returns them."""


def _cases() -> list[dict[str, str]]:
    return [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line]


def _learnt() -> Redactor:
    redactor = Redactor()
    for name in NAMES:  # learnt from tool results, as a run learns them
        redactor.learn(json.dumps({"order_id": "12345", "customer": name, "amount_cents": 100}))
    return redactor


def test_the_corpus_has_both_kinds() -> None:
    cases = _cases()
    kept = [c for c in cases if c["text"] == c["redacted"]]
    changed = [c for c in cases if c["text"] != c["redacted"]]
    assert len(kept) >= 15 and len(changed) >= 20
    for placeholder in ("[email]", "[phone]", "[card]", "[name]"):
        assert any(placeholder in c["redacted"] for c in changed), placeholder


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["why"])
def test_each_labelled_example(case: dict[str, str]) -> None:
    assert _learnt().text(case["text"]) == case["redacted"]


def test_card_numbers_pass_luhn() -> None:
    assert luhn_ok("4111111111111111") and luhn_ok("378282246310005")
    assert not luhn_ok("4111111111111112")


def test_names_are_learnt_from_tool_results_and_nested_values() -> None:
    redactor = Redactor()
    redactor.learn({"reports": [{"observation": json.dumps({"customer": "M. Tanaka"})}]})
    redactor.learn({"customer_name": "Jane Doe", "note": "no name here"})
    assert redactor.names == ["M. Tanaka", "Jane Doe"]
    assert redactor.text("Tanaka-san and jane doe") == "[name]-san and [name]"
    # Keys stay, unchanged parts are the same objects.
    value = {"customer": "M. Tanaka", "ids": [12345], "ok": "fine"}
    redacted = redactor.value(value)
    assert redacted == {"customer": "[name]", "ids": [12345], "ok": "fine"}
    assert redacted["ids"] is value["ids"]
    assert redactor.value({"ok": "fine"}) == {"ok": "fine"}


def test_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(redaction.ENV, raising=False)
    assert redaction.enabled() and redaction.redact_text("a@b.example") == "[email]"
    for off in ("off", "0", "false", "no"):
        monkeypatch.setenv(redaction.ENV, off)
        assert not redaction.enabled() and redaction.active() is None
        assert redaction.redact_text("a@b.example") == "a@b.example"


def test_a_trace_line_is_redacted_and_its_originals_sealed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSTER_SEAL_KEY_FILE", str(tmp_path / "seal.key"))
    monkeypatch.delenv("MUSTER_ENCRYPTION_KEYS", raising=False)
    monkeypatch.delenv(redaction.ENV, raising=False)
    result = json.dumps({"order_id": "12345", "customer": "T. Achterberg", "amount_cents": 12900})
    writer = TraceWriter("redact-1", directory=tmp_path)
    writer.emit("worker_step", kind="tool", tool="orders.find_order", args={"order_id": "12345"},
                result=result)
    writer.emit("node", node="plan", outcome="ok", notes=["write to t.a@example.org"])
    writer.emit("node", node="collect", outcome="continue")
    writer.close()
    text = (tmp_path / "redact-1.jsonl").read_text(encoding="utf-8")
    assert "Achterberg" not in text and "t.a@example.org" not in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert json.loads(lines[0]["result"])["customer"] == "[name]"
    assert lines[0]["args"] == {"order_id": "12345"}  # unchanged fields stay as they were
    assert lines[0][trace_seal.SEALED].startswith("seal:") and trace_seal.SEALED in lines[1]
    assert trace_seal.SEALED not in lines[2]  # nothing personal: nothing sealed
    events = read_trace(tmp_path / "redact-1.jsonl")
    assert events[0]["result"] == result and events[1]["notes"] == ["write to t.a@example.org"]
    assert trace_seal.SEALED not in events[0]
    # Another installation's key opens nothing: the line stays redacted.
    monkeypatch.setenv("MUSTER_SEAL_KEY_FILE", str(tmp_path / "other.key"))
    assert "[name]" in read_trace(tmp_path / "redact-1.jsonl")[0]["result"]
    # A sealed field moved to another thread's line does not open there.
    moved = {**lines[0], "thread_id": "another"}
    monkeypatch.setenv("MUSTER_SEAL_KEY_FILE", str(tmp_path / "seal.key"))
    assert trace_seal.opened(moved) is moved


def test_log_records_are_redacted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(redaction.ENV, raising=False)
    redaction.install_log_redaction()
    redaction.REDACTOR.learn({"customer": "V. Quirke"})
    path = tmp_path / "log.txt"
    handler = logging.FileHandler(path, encoding="utf-8")
    logger = logging.getLogger("muster.test.redaction")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        logger.info("refund for %s, call %s", "V. Quirke", "+1 (555) 010-9999")
        try:
            raise ValueError("card 4111 1111 1111 1111 declined for quirke@example.com")
        except ValueError:
            logger.exception("payment failed")
    finally:
        logger.removeHandler(handler)
        handler.close()
    text = path.read_text(encoding="utf-8")
    assert "refund for [name], call [phone]" in text and "card [card] declined for [email]" in text
    assert "Quirke" not in text and "4111" not in text


async def test_audit_rows_keep_their_shape_with_personal_fields_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(redaction.ENV, raising=False)
    redaction.REDACTOR.learn({"customer": "W. Ostrowska"})
    async with await AuditLog.open(tmp_path / "audit.sqlite") as audit:
        row, first = await audit.decide(
            thread_id="t1", actor="alice", role="lead", digest="d1",
            result={"decision": "approved", "note": "W. Ostrowska asked, w.o@example.com",
                    "args": {"order_id": "12345", "amount_cents": 12900}},
        )
        await audit.record(thread_id="t1", event="execution", actor="muster", digest="d1",
                           result={"status": "executed", "text": "refunded W. Ostrowska"})
        rows = await audit.rows("t1")
    assert first and json.loads(row.result)["decision"] == "approved"
    decision, execution = (json.loads(r.result) for r in rows)
    assert decision == {"decision": "approved", "note": "[name] asked, [email]",
                        "args": {"order_id": "12345", "amount_cents": 12900}}
    assert execution == {"status": "executed", "text": "refunded [name]"}
    assert b"Ostrowska" not in (tmp_path / "audit.sqlite").read_bytes()


def test_a_structured_log_record_keeps_its_type_and_an_id_is_no_phone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # structlog (as `langgraph dev` runs it) hands the stdlib an event dict as the record's
    # msg: its formatter copies it, so redaction must keep it a dict.
    monkeypatch.delenv(redaction.ENV, raising=False)
    redaction.install_log_redaction()
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    logger = logging.getLogger("muster.test.structured")
    handler = Keep()
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    run_id = "01a23849-0012-7123-a203-223358ba81db"
    try:
        logger.info({"event": "Created run", "run_id": run_id, "by": "ann@example.com"})
    finally:
        logger.removeHandler(handler)
    (record,) = seen
    assert isinstance(record.msg, dict)
    assert record.msg["run_id"] == run_id and record.msg["by"] == "[email]"
    assert redaction.REDACTOR.text(f"run {run_id}") == f"run {run_id}"
