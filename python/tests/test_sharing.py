"""Embedded mode shares a pack with a running ``kith serve``: what one
writes, the other reads, for the same owner only.

The server here is its own, over a pack no forget compacted: after a
``kith serve`` has compacted its pack (a forget's VACUUM), it does not see
what a process that opened the pack later writes until that process
checkpoints (closes), a kith-store behaviour found by this test's first
version, documented in docs/python.md."""

from __future__ import annotations

import kith
from conftest import ALICE_KEY, BOB_KEY, Server


def test_embedded_and_served_share_one_pack(tmp_path, fresh):
    server = Server(tmp_path)
    try:
        check_sharing(server, fresh)
    finally:
        server.stop()


def check_sharing(server, fresh):
    embedded = kith.Memory(server.pack, owner="alice", create=False)
    client = kith.Client(server.url, ALICE_KEY)

    mine = embedded.store("I keep my bike in the basement.", session=fresh, speaker="Alice")
    theirs = client.store("The basement key is on the hook.", session=fresh, speaker="Alice")

    # The server finds what this process wrote, and the other way round.
    assert mine.event_id in [h.event_id for h in client.retrieve("my bike", session=fresh)]
    assert theirs.event_id in [h.event_id for h in embedded.retrieve("key hook", session=fresh)]
    assert {e.id for e in embedded.events(session=fresh)} == {mine.event_id, theirs.event_id}

    # bob's key sees none of it; neither does bob's embedded handle.
    assert kith.Client(server.url, BOB_KEY).events(session=fresh) == []
    assert embedded.for_owner("bob").events(session=fresh) == []

    # A forget through the server is seen here at once.
    client.forget(event=mine.event_id, reason="asked")
    assert embedded.event(mine.event_id).forgotten
