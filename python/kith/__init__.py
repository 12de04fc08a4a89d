"""kith: long-term memory for LLM agents.

- :class:`Memory` runs kith's engine in this process (a pack directory or
  PostgreSQL); :class:`AsyncMemory` is the same for asyncio.
- :class:`Client` has the same methods over the HTTP API of a running
  ``kith serve``; :class:`AsyncClient` is the same for asyncio.
- :mod:`kith.langgraph` and :mod:`kith.langchain` adapt them to LangGraph's
  store and LangChain's chat history and retriever.

Errors are :class:`KithError` subclasses (:mod:`kith.errors`).
"""

from ._kith import __version__
from .aio import AsyncClient, AsyncMemory
from .client import Client
from .errors import (
    Busy,
    Conflict,
    Corrupted,
    InvalidInput,
    KithError,
    NotFound,
    ServerError,
    StorageError,
    Unauthorized,
    Unavailable,
    Unsupported,
    Upstream,
)
from .memory import Memory
from .types import Event, Hit, IngestReceipt, Retrieval, StoreReceipt

__all__ = [
    "__version__",
    "Memory",
    "AsyncMemory",
    "Client",
    "AsyncClient",
    "KithError",
    "InvalidInput",
    "NotFound",
    "Conflict",
    "Busy",
    "Corrupted",
    "StorageError",
    "Unsupported",
    "Unavailable",
    "Upstream",
    "Unauthorized",
    "ServerError",
    "StoreReceipt",
    "IngestReceipt",
    "Hit",
    "Retrieval",
    "Event",
]
