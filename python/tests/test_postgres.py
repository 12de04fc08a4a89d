"""Memory.connect: the engine on PostgreSQL. ``KITH_TEST_PG_URL`` names a
fresh database (crates/kith-cli/tests/python_package.rs makes one on the
throwaway server of kith's tests); without it the test fails, saying so."""

from __future__ import annotations

import os

import pytest

import kith


def pg_url() -> str:
    url = os.environ.get("KITH_TEST_PG_URL")
    if not url:
        raise RuntimeError("KITH_TEST_PG_URL is not set: it must name an empty PostgreSQL database")
    return url


def test_connect_makes_a_memory_then_reopens_it():
    url = pg_url()
    m = kith.Memory.connect(url, owner="maya", embeddings="none")
    # It names the database (the password, if any, hidden).
    assert url.split("dbname=")[-1].split("/")[-1] in m.location
    r = m.store("I moved to Lisbon in September.", speaker="Maya", session="pg")
    m.ingest("My sister Ana lives in Berlin.", speaker="Maya", session="pg")
    assert m.retrieve("Lisbon")[0].event_id == r.event_id

    again = kith.Memory.connect(url, owner="maya", create=False)
    assert [e.content for e in again.events(session="pg")][0] == "I moved to Lisbon in September."
    assert again.for_owner("sam").events() == []
    report = again.forget(session="pg", reason="asked")
    assert report["events"] and again.event(r.event_id).forgotten


def test_connect_to_no_server_is_a_readable_error():
    with pytest.raises(kith.KithError) as e:
        kith.Memory.connect("postgres://kith@127.0.0.1:9/none", owner="maya", create=False)
    assert "127.0.0.1:9" in str(e.value)
