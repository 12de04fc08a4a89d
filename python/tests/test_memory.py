"""The embedded engine and the client: the same calls, the same answers.

Every test here runs twice (``mem``: a pack in this process, and a Client
of a real ``kith serve``)."""

from __future__ import annotations

import datetime as dt

import pytest

import kith


def test_store_then_retrieve_gives_the_turn_with_who_and_when(mem, fresh):
    when = dt.datetime(2025, 3, 4, 19, 2, tzinfo=dt.timezone.utc)
    r = mem.store(
        "I moved to Lisbon in September.",
        role="user",
        speaker="Maya Okafor",
        session=fresh,
        time=when,
        source_id=f"{fresh}-1",
        metadata={"channel": "chat"},
    )
    assert r.created
    again = mem.store("I moved to Lisbon in September.", session=fresh, source_id=f"{fresh}-1")
    assert (again.event_id, again.created) == (r.event_id, False)
    mem.store("Lovely! How is the weather?", role="assistant", session=fresh)

    hits = mem.retrieve("Who moved to Lisbon?", budget=256, session=fresh)
    assert isinstance(hits, kith.Retrieval)
    top = hits[0]
    assert (top.text, top.speaker, top.role, top.session) == (
        "I moved to Lisbon in September.",
        "Maya Okafor",
        "user",
        fresh,
    )
    assert top.time.startswith("2025-03-04T19:02:00")
    assert top.event_id == r.event_id and top.score > 0
    assert "Lisbon" in hits.context and 0 < hits.tokens <= 256
    assert [(h.text, h.speaker, h.time, h.score) for h in hits][0][0] == top.text

    event = mem.event(r.event_id)
    assert event.metadata == {"channel": "chat"} and event.speaker == "Maya Okafor"
    assert [e.content for e in mem.events(session=fresh)] == [
        "I moved to Lisbon in September.",
        "Lovely! How is the weather?",
    ]



def test_asked_at_is_the_time_relative_dates_are_read_against(mem, fresh):
    utc = dt.timezone.utc
    for day, text in [
        (dt.datetime(2023, 2, 14, 10, tzinfo=utc), "I rode in the bike charity event today."),
        (dt.datetime(2023, 3, 19, 10, tzinfo=utc), "I walked in the hunger charity event today."),
    ]:
        mem.store(text, speaker="Alice", session=fresh, time=day)

    def first(asked_at):
        hits = mem.retrieve(
            "What charity event did I do a month ago?", session=fresh, asked_at=asked_at, record=False
        )
        return hits[0].text

    # A month before 18 April is the walk; a month before 20 March, the ride.
    assert "hunger" in first("2023-04-18T18:00:00Z")
    assert "bike" in first(dt.datetime(2023, 3, 20, 9, tzinfo=utc))
    with pytest.raises(kith.InvalidInput) as e:
        mem.retrieve("x", asked_at="yesterday")
    assert "asked_at" in str(e.value)

def test_ingest_extracts_claims_and_a_deferred_one_waits(mem, fresh):
    r = mem.ingest("My sister Maya lives in Berlin.", speaker="Alice", session=fresh)
    assert r.status == "complete" and r.error is None
    assert r.derivation["claims"] >= 1 and r.derivation["entities_created"] >= 1
    deferred = mem.ingest("I work at Northwind.", speaker="Alice", session=fresh, defer=True)
    assert deferred.status == "pending" and deferred.derivation is None
    many = mem.ingest_many(
        [{"content": "I like tea.", "speaker": "Alice", "session": fresh}, {"content": "Noted!", "role": "assistant", "session": fresh}]
    )
    assert [m.status for m in many] == ["complete", "complete"]


def test_forget_a_session_erases_it_and_a_dry_run_writes_nothing(mem, fresh):
    kept = mem.store("The code word is pineapple.", session=fresh + "-kept")
    gone = mem.store("My passport number is X1234567.", session=fresh)
    preview = mem.forget(session=fresh, reason="asked", dry_run=True)
    assert preview["dry_run"] and preview["events"] == [gone.event_id]
    assert mem.event(gone.event_id).content == "My passport number is X1234567."

    report = mem.forget(session=fresh, reason="the user asked")
    assert report["events"] == [gone.event_id] and report["verification"]["texts_found_in_pack"] == 0
    tomb = mem.event(gone.event_id)
    assert tomb.forgotten and tomb.content == ""
    assert all(h.event_id != gone.event_id for h in mem.retrieve("passport number X1234567"))
    assert mem.event(kept.event_id).content == "The code word is pineapple."
    with pytest.raises(kith.NotFound):
        mem.forget(session="no-such-session-anywhere", reason="asked")


def test_organize_merges_known_aliases_and_undo_restores_them(mem, fresh):
    mem.ingest("I use Postgres at work.", speaker="Alice", session=fresh)
    mem.ingest("I use PostgreSQL for everything.", speaker="Alice", session=fresh)
    report = mem.organize()
    merges = [m for job in report["jobs"] for m in job["merges"]]
    assert merges, report
    undone = mem.undo(merges[0]["op_id"])
    assert undone["undone_op_id"] == merges[0]["op_id"] and not undone["replayed"]
    assert mem.undo(merges[0]["op_id"])["replayed"]
    assert isinstance(mem.aliases(), list) and mem.aliases("pending") == [
        p for p in mem.aliases() if p["status"] == "pending"
    ]


def test_import_reports_progress_per_batch(mem, fresh):
    seen = []
    messages = [{"content": f"note {i} about gardening", "session": fresh, "source_id": f"{fresh}-{i}"} for i in range(25)]
    report = mem.import_messages(messages, batch_size=10, progress=lambda d, t: seen.append((d, t)))
    assert report == {"messages": 25, "created": 25, "existing": 0}
    assert seen == [(10, 25), (20, 25), (25, 25)]
    again = mem.import_messages(messages[:5])
    assert again == {"messages": 5, "created": 0, "existing": 5}
    assert len(mem.events(session=fresh)) == 25


def test_import_jsonl_reads_a_file(mem, fresh, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(
        '{"content": "first line", "session": "%s"}\n\n{"content": "second line", "session": "%s", "role": "assistant"}\n'
        % (fresh, fresh)
    )
    assert mem.import_jsonl(path)["created"] == 2
    assert [e.role for e in mem.events(session=fresh)] == ["user", "assistant"]
