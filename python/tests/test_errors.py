"""Bad input raises a typed, readable error and changes nothing, in both
modes; the exceptions carry kith's error kinds."""

from __future__ import annotations

import pytest

import kith
from kith.errors import error_for


def count(mem, session):
    return len(mem.events(session=session))


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda m, s: m.store("hi", role="boss", session=s), "role"),
        (lambda m, s: m.store("hi", session=s, time="2025-03-04T19:02:00"), "offset"),
        (lambda m, s: m.store("hi", session=s, metadata={"score": float("nan")}), "metadata.score is nan"),
        (lambda m, s: m.store_many([{"content": "ok", "session": s}, {"content": "x", "role": "nobody", "session": s}]), "role"),
        (lambda m, s: m.store_many([{"content": "ok", "session": s, "colour": "red"}]), "unknown field"),
        (lambda m, s: m.retrieve("anything", budget=0), "budget"),
        (lambda m, s: m.retrieve("anything", limit=0), "limit"),
        (lambda m, s: m.retrieve("anything", without=["telepathy"]), "telepathy"),
        (lambda m, s: m.forget(reason="why"), "exactly one"),
        (lambda m, s: m.forget(session=s, reason=""), "reason"),
        (lambda m, s: m.organize(["tidy_up"]), "tidy_up"),
    ],
)
def test_bad_input_is_invalid_input_and_writes_nothing(mem, fresh, call, words):
    mem.store("already here", session=fresh)
    with pytest.raises(kith.InvalidInput) as e:
        call(mem, fresh)
    assert e.value.kind == "invalid_input"
    assert isinstance(e.value, ValueError) and isinstance(e.value, kith.KithError)
    assert words.lower() in str(e.value).lower()
    assert count(mem, fresh) == 1


def test_unknown_ids_are_not_found(mem):
    for bad in ["00000000-0000-0000-0000-000000000000", "not-a-uuid"]:
        with pytest.raises(kith.NotFound) as e:
            mem.event(bad)
        assert e.value.kind == "not_found"
        with pytest.raises(kith.NotFound):
            mem.forget(event=bad, reason="asked")


def test_undoing_a_record_that_cannot_be_undone_is_a_conflict(mem, fresh):
    mem.store("hello", session=fresh)
    report = mem.forget(session=fresh, reason="asked")
    with pytest.raises(kith.Conflict) as e:
        mem.undo(report["operation_id"])
    assert e.value.kind == "conflict"


def test_a_server_refuses_a_wrong_key(server):
    c = kith.Client(server.url, "not-a-key-of-this-server-000")
    with pytest.raises(kith.Unauthorized) as e:
        c.store("hi")
    assert e.value.status == 401 and e.value.code == "unauthorized"


def test_an_unreachable_server_is_a_server_error():
    c = kith.Client("http://127.0.0.1:9", timeout=5)
    with pytest.raises(kith.ServerError) as e:
        c.retrieve("anything")
    assert "cannot reach kith at http://127.0.0.1:9" in str(e.value)


def test_http_codes_map_to_the_engine_kinds():
    assert type(error_for("undo_refused", "m", 409)) is kith.Conflict
    assert type(error_for("reason_required", "m", 422)) is kith.InvalidInput
    assert type(error_for("busy", "m", 503)) is kith.Busy
    # An embeddings endpoint down or rate limited, or answering wrongly.
    assert type(error_for("unavailable", "m", 503)) is kith.Unavailable
    assert type(error_for("upstream", "m", 502)) is kith.Upstream
    assert type(error_for("internal", "m", 500)) is kith.ServerError
