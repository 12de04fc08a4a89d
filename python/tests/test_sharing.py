"""Embedded mode shares a pack with a running ``kith serve``: what one
writes, the other reads, for the same owner only."""

from __future__ import annotations

import kith
from conftest import ALICE_KEY, BOB_KEY


def test_embedded_and_served_share_one_pack(server, fresh):
    embedded = kith.Memory(server.pack, owner="alice", create=False)
    client = kith.Client(server.url, ALICE_KEY)

    mine = embedded.store("I keep my bike in the basement.", session=fresh, speaker="Alice")
    theirs = client.store("The basement key is on the hook.", session=fresh, speaker="Alice")

    assert [h.event_id for h in client.retrieve("bike basement", session=fresh)][:1] == [mine.event_id]
    assert {e.id for e in embedded.events(session=fresh)} == {mine.event_id, theirs.event_id}

    # bob's key sees none of it; neither does bob's embedded handle.
    assert kith.Client(server.url, BOB_KEY).events(session=fresh) == []
    assert embedded.for_owner("bob").events(session=fresh) == []

    # A forget through the server is seen here at once.
    client.forget(event=mine.event_id, reason="asked")
    assert embedded.event(mine.event_id).forgotten
