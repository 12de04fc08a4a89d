""":class:`Memory`: kith's engine in this process, no server needed."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Union

from . import _kith
from ._api import MemoryApi, Progress, dumps

__all__ = ["Memory"]

PathLike = Union[str, "os.PathLike[str]"]


class Memory(MemoryApi):
    """Long-term memory in a kith pack (a directory) or a PostgreSQL
    database, for one owner::

        m = Memory("memory.kith", owner="maya")
        m.ingest("I moved to Lisbon.", speaker="Maya Okafor", session="s1")
        hits = m.retrieve("Where does Maya live?", budget=1024)

    A missing (or empty) directory becomes a new pack embedding with
    ``embeddings`` (``minilm``, the default, downloads the 83 MB model once
    into kith's cache; ``none`` keeps lexical and graph retrieval only);
    ``create=False`` opens only an existing pack. Calls release the GIL
    and are safe from several threads; a pack may be shared with other
    processes, ``kith serve`` included (see docs/python.md).
    """

    def __init__(
        self,
        path: PathLike = "memory.kith",
        *,
        owner: str = "default",
        embeddings: Optional[str] = None,
        create: bool = True,
    ) -> None:
        self._engine = _kith.Engine.open(os.fspath(path), owner, embeddings, create)
        self.owner = owner

    @classmethod
    def connect(
        cls,
        url: str,
        *,
        owner: str = "default",
        embeddings: Optional[str] = None,
        create: bool = True,
    ) -> "Memory":
        """kith's memory in the PostgreSQL database at ``url``
        (``postgres://user:pass@host/db``, with pgvector); made there first
        when the database holds none and ``create``."""
        return cls._wrap(_kith.Engine.connect(url, owner, embeddings, create))

    @classmethod
    def _wrap(cls, engine: "_kith.Engine") -> "Memory":
        m = cls.__new__(cls)
        m._engine = engine
        m.owner = engine.owner
        return m

    def for_owner(self, owner: str) -> "Memory":
        """The same memory acting for another owner (owners never see
        each other's messages)."""
        return Memory._wrap(self._engine.with_owner(owner))

    @property
    def location(self) -> str:
        """The pack directory, or the database URL without its password."""
        return self._engine.location

    def process(self, limit: int = 0) -> Dict[str, Any]:
        """Extracts what deferred ingests left pending (``limit`` items at
        most, 0: all): ``{taken, completed, failed}``."""
        return json.loads(self._engine.process(limit))

    def __repr__(self) -> str:
        return f"Memory({self.location!r}, owner={self.owner!r})"

    # -- transport: the engine -----------------------------------------------------

    def _store_batch(self, bodies: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        return json.loads(self._engine.store_batch(dumps(bodies)))

    def _ingest_batch(
        self, bodies: List[Dict[str, Any]], defer: bool, first_person_owner: bool
    ) -> List[Dict[str, Any]]:
        return json.loads(self._engine.ingest_batch(dumps(bodies), defer, first_person_owner))

    def _retrieve(self, body: Dict[str, Any]) -> Dict[str, Any]:
        return json.loads(self._engine.retrieve(dumps(body)))

    def _events_page(
        self, scope: Optional[str], session: Optional[str], after: int, limit: int
    ) -> Dict[str, Any]:
        return json.loads(self._engine.events(scope, session, after, limit))

    def _event(self, event_id: str) -> Dict[str, Any]:
        return json.loads(self._engine.event(event_id))

    def _forget(
        self, selector: str, value: Optional[str], reason: str, dry_run: bool
    ) -> Dict[str, Any]:
        return json.loads(self._engine.forget(selector, value, reason, dry_run))

    def _organize(self, jobs: List[str], budget: Optional[int]) -> Dict[str, Any]:
        return json.loads(self._engine.organize(jobs, budget or 0))

    def _aliases(self, status: Optional[str]) -> List[Dict[str, Any]]:
        return json.loads(self._engine.aliases(status))

    def _undo(self, op: str) -> Dict[str, Any]:
        return json.loads(self._engine.undo(op))

    def _stats(self) -> Dict[str, Any]:
        return json.loads(self._engine.stats())

    def _import(
        self, bodies: List[Dict[str, Any]], batch_size: int, progress: Optional[Progress]
    ) -> Dict[str, Any]:
        text = "\n".join(dumps(b) for b in bodies)
        return json.loads(self._engine.import_jsonl(text, None, batch_size, False, progress))
