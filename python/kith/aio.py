"""asyncio versions of :class:`kith.Memory` and :class:`kith.Client`.

Each method runs its synchronous twin in a worker thread
(``asyncio.to_thread``), so the engine's blocking work (SQLite, the
embedding model, extraction) or an HTTP round trip never blocks the event
loop; the engine releases the GIL meanwhile, so other coroutines run. The
arguments are those of the synchronous method.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from ._api import DEFAULT_JOBS, MemoryApi, Message
from .client import Client
from .memory import Memory
from .types import Event, IngestReceipt, Retrieval, StoreReceipt

__all__ = ["AsyncMemory", "AsyncClient"]


class _AsyncApi:
    """The shared methods; ``sync`` is the memory they run on."""

    sync: MemoryApi

    @property
    def owner(self) -> str:
        return self.sync.owner

    async def store(self, content: str, **options: Any) -> StoreReceipt:
        """:meth:`kith.Memory.store`, off the event loop."""
        return await asyncio.to_thread(self.sync.store, content, **options)

    async def store_many(self, messages: Iterable[Message]) -> List[StoreReceipt]:
        """:meth:`kith.Memory.store_many`, off the event loop."""
        return await asyncio.to_thread(self.sync.store_many, list(messages))

    async def ingest(self, content: str, **options: Any) -> IngestReceipt:
        """:meth:`kith.Memory.ingest`, off the event loop."""
        return await asyncio.to_thread(self.sync.ingest, content, **options)

    async def ingest_many(self, messages: Iterable[Message], **options: Any) -> List[IngestReceipt]:
        """:meth:`kith.Memory.ingest_many`, off the event loop."""
        return await asyncio.to_thread(self.sync.ingest_many, list(messages), **options)

    async def retrieve(self, query: str, **options: Any) -> Retrieval:
        """:meth:`kith.Memory.retrieve`, off the event loop."""
        return await asyncio.to_thread(self.sync.retrieve, query, **options)

    async def events(self, **options: Any) -> List[Event]:
        """:meth:`kith.Memory.events`, off the event loop."""
        return await asyncio.to_thread(self.sync.events, **options)

    async def event(self, event_id: str) -> Event:
        """:meth:`kith.Memory.event`, off the event loop."""
        return await asyncio.to_thread(self.sync.event, event_id)

    async def forget(self, **options: Any) -> Dict[str, Any]:
        """:meth:`kith.Memory.forget`, off the event loop."""
        return await asyncio.to_thread(self.sync.forget, **options)

    async def organize(
        self, jobs: Sequence[str] = DEFAULT_JOBS, *, budget: Optional[int] = None
    ) -> Dict[str, Any]:
        """:meth:`kith.Memory.organize`, off the event loop."""
        return await asyncio.to_thread(self.sync.organize, jobs, budget=budget)

    async def aliases(self, status: Optional[str] = None) -> List[Dict[str, Any]]:
        """:meth:`kith.Memory.aliases`, off the event loop."""
        return await asyncio.to_thread(self.sync.aliases, status)

    async def undo(self, op: str) -> Dict[str, Any]:
        """:meth:`kith.Memory.undo`, off the event loop."""
        return await asyncio.to_thread(self.sync.undo, op)

    async def stats(self) -> Dict[str, Any]:
        """:meth:`kith.Memory.stats`, off the event loop."""
        return await asyncio.to_thread(self.sync.stats)

    async def import_messages(self, messages: Iterable[Message], **options: Any) -> Dict[str, Any]:
        """:meth:`kith.Memory.import_messages`, off the event loop (the
        progress callback runs in the worker thread)."""
        return await asyncio.to_thread(self.sync.import_messages, list(messages), **options)

    async def import_jsonl(
        self, path: Union[str, "os.PathLike[str]"], **options: Any
    ) -> Dict[str, Any]:
        """:meth:`kith.Memory.import_jsonl`, off the event loop."""
        return await asyncio.to_thread(self.sync.import_jsonl, path, **options)


class AsyncMemory(_AsyncApi):
    """:class:`kith.Memory` for asyncio: the same arguments, awaitable
    methods. ``AsyncMemory.wrap(memory)`` shares an existing one."""

    def __init__(self, path: Union[str, "os.PathLike[str]"] = "memory.kith", **options: Any):
        self.sync: Memory = Memory(path, **options)

    @classmethod
    def wrap(cls, memory: Memory) -> "AsyncMemory":
        a = cls.__new__(cls)
        a.sync = memory
        return a

    @classmethod
    async def connect(cls, url: str, **options: Any) -> "AsyncMemory":
        """:meth:`kith.Memory.connect`, off the event loop."""
        return cls.wrap(await asyncio.to_thread(Memory.connect, url, **options))

    async def process(self, limit: int = 0) -> Dict[str, Any]:
        """:meth:`kith.Memory.process`, off the event loop."""
        return await asyncio.to_thread(self.sync.process, limit)


class AsyncClient(_AsyncApi):
    """:class:`kith.Client` for asyncio (each request in a worker thread)."""

    def __init__(self, base_url: str, api_key: Optional[str] = None, **options: Any):
        self.sync: Client = Client(base_url, api_key, **options)
