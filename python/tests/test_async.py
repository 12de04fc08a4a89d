"""AsyncMemory and AsyncClient: the same methods, awaited; the engine's
work runs off the event loop, with the GIL released."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time

import kith


def many(session, n):
    return [{"content": f"memory {i}: I planted {i} tulips in the garden.", "session": session, "source_id": f"{session}-{i}"} for i in range(n)]


def test_async_memory_has_the_same_methods(tmp_path):
    async def main():
        m = kith.AsyncMemory(tmp_path / "a.kith", owner="maya", embeddings="none")
        r = await m.store("I moved to Lisbon.", speaker="Maya", session="s1")
        i = await m.ingest("My sister Ana lives in Berlin.", speaker="Maya", session="s1")
        hits, events = await asyncio.gather(m.retrieve("Lisbon"), m.events(session="s1"))
        assert hits[0].event_id == r.event_id and i.status == "complete"
        assert [e.id for e in events] == [r.event_id, i.event_id]
        report = await m.forget(event=r.event_id, reason="asked")
        assert report["events"] == [r.event_id]
        assert (await m.stats())["events"] == 2

    asyncio.run(main())


def test_the_event_loop_runs_while_the_engine_works(tmp_path):
    """A ticker coroutine keeps ticking during a long import: the import
    ran in a thread, not on the loop."""

    async def main():
        m = kith.AsyncMemory(tmp_path / "a.kith", owner="maya", embeddings="none")
        ticks = []
        done = asyncio.Event()

        async def ticker():
            while not done.is_set():
                ticks.append(time.monotonic())
                await asyncio.sleep(0.001)

        task = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        before = len(ticks)
        report = await m.import_messages(many("bulk", 3000), batch_size=100)
        during = len(ticks) - before
        done.set()
        await task
        assert report["created"] == 3000
        assert during >= 5, f"the loop ticked {during} times during the import"

    asyncio.run(main())


HOLD_THE_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


def test_other_threads_run_while_the_engine_waits(tmp_path):
    """The GIL is released around engine calls. Another process holds the
    pack's write lock until a Python thread of this one tells it to let
    go, half a second later; ``store`` waits for that lock inside the
    engine. Had the engine kept the GIL, the thread could not run and the
    store would end in ``Busy``."""
    m = kith.Memory(tmp_path / "g.kith", owner="maya", embeddings="none")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(tmp_path / "g.kith" / "kith.sqlite")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert holder.stdout.readline() == b"locked\n"

    def let_go():
        time.sleep(0.5)
        holder.stdin.write(b"go\n")
        holder.stdin.flush()

    t = threading.Thread(target=let_go)
    t.start()
    started = time.monotonic()
    r = m.store("written once the lock was free")
    waited = time.monotonic() - started
    t.join()
    assert holder.wait(timeout=30) == 0
    # It did wait for the lock (so the thread ran while the engine waited).
    assert r.created and waited >= 0.3, waited
    assert m.event(r.event_id).content == "written once the lock was free"


def test_async_client_against_a_server(server, fresh):
    async def main():
        c = kith.AsyncClient(server.url, "alice-key-0123456789abcdef")
        r = await c.store("We hiked the Sintra trail.", session=fresh)
        hits = await c.retrieve("Sintra trail", session=fresh)
        assert hits[0].event_id == r.event_id

    asyncio.run(main())
