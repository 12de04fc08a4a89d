"""What only the in-process engine has: packs on disk, owners side by
side in one pack, deferred work run here, the embedding model."""

from __future__ import annotations

import pytest

import kith


def test_a_pack_persists_and_opens_again(tmp_path):
    m = kith.Memory(tmp_path / "p.kith", owner="maya", embeddings="none")
    r = m.store("I adopted a cat named Miso.", speaker="Maya")
    del m
    again = kith.Memory(tmp_path / "p.kith", owner="maya", create=False)
    assert again.event(r.event_id).content == "I adopted a cat named Miso."
    assert again.location == str(tmp_path / "p.kith")


def test_owners_never_see_each_other(tmp_path):
    maya = kith.Memory(tmp_path / "p.kith", owner="maya", embeddings="none")
    sam = maya.for_owner("sam")
    r = maya.store("My locker code is 4711.")
    sam.store("My locker code is 1234.")
    assert [h.text for h in sam.retrieve("locker code")] == ["My locker code is 1234."]
    with pytest.raises(kith.NotFound):
        sam.event(r.event_id)
    assert maya.stats()["events"] == 1


def test_deferred_ingests_are_processed_here(memory):
    r = memory.ingest("I work at Northwind.", speaker="Maya", defer=True)
    assert r.status == "pending"
    assert memory.process() == {"taken": 1, "completed": 1, "failed": 0}
    assert memory.process()["taken"] == 0


def test_a_minilm_pack_finds_by_meaning(tmp_path):
    m = kith.Memory(tmp_path / "v.kith", owner="maya")  # embeddings: minilm
    m.store("I moved to Lisbon in September.", speaker="Maya")
    m.store("The printer on floor two is out of toner.", speaker="Sam")
    hits = m.retrieve("Which city does Maya live in now?", without=["lexical"])
    assert hits[0].text == "I moved to Lisbon in September."
    assert "vector" in [p["path"] for p in hits[0].raw["trace"]["paths"]]


def test_a_missing_pack_is_not_made_when_create_is_false(tmp_path):
    with pytest.raises(kith.NotFound) as e:
        kith.Memory(tmp_path / "absent.kith", create=False)
    assert "is not a kith pack" in str(e.value)
    assert not (tmp_path / "absent.kith").exists()
