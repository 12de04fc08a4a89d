"""LangChain adapters over kith: a chat-message history and a retriever.

- :class:`KithChatMessageHistory` keeps one conversation (a kith session)
  as LangChain messages: ``add_messages`` stores them (or ingests them,
  extracting entities and claims, with ``ingest=True``), ``messages``
  reads them back in order, ``clear`` forgets the session.
- :class:`KithRetriever` is a ``BaseRetriever``: each document is a
  piece of evidence kith's hybrid retrieval found, with who said it, when,
  and its score in ``metadata``.

Both take a :class:`kith.Memory` or a :class:`kith.Client`.
"""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional, Sequence

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from ._api import MemoryApi
from .errors import InvalidInput, NotFound
from .types import Event

__all__ = ["KithChatMessageHistory", "KithRetriever"]

_META = "langchain"
_ROLES = {"user", "participant", "assistant", "tool", "system"}


def _text(message: BaseMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    parts = []
    for part in message.content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "\n".join(parts)


def _body(message: BaseMessage, session: str, scope: Optional[str]) -> Dict[str, Any]:
    """A LangChain message as a kith message: its role, speaker (a
    message's ``name``), text, and what a round trip needs in metadata."""
    extra: Dict[str, Any] = {"type": message.type}
    if isinstance(message, HumanMessage):
        role = "user"
    elif isinstance(message, AIMessage):
        role = "assistant"
        if message.tool_calls:
            extra["tool_calls"] = message.tool_calls
    elif isinstance(message, SystemMessage):
        role = "system"
    elif isinstance(message, ToolMessage):
        role = "tool"
        extra["tool_call_id"] = message.tool_call_id
    elif isinstance(message, ChatMessage) and message.role in _ROLES:
        role = message.role
    else:
        raise InvalidInput(
            f"cannot keep a {type(message).__name__} (role "
            f"{getattr(message, 'role', message.type)!r}); kith's roles are {', '.join(sorted(_ROLES))}"
        )
    text = _text(message)
    if not text.strip():
        # An AI turn that only calls tools has no text; kith keeps text.
        names = [c["name"] for c in extra.get("tool_calls", [])]
        text = f"(calls {', '.join(names)})" if names else f"({message.type} message)"
        extra["empty"] = True
    body: Dict[str, Any] = {
        "content": text,
        "role": role,
        "session": session,
        "metadata": {_META: extra},
    }
    if message.name:
        body["speaker"] = message.name
    if scope is not None:
        body["scope"] = scope
    return body


def _message(event: Event) -> BaseMessage:
    extra = (event.metadata or {}).get(_META, {}) if isinstance(event.metadata, dict) else {}
    content = "" if extra.get("empty") else event.content
    name = event.speaker
    if event.role in ("user", "participant") and extra.get("type", "human") == "human":
        return HumanMessage(content=content, name=name)
    if event.role == "assistant":
        return AIMessage(content=content, name=name, tool_calls=extra.get("tool_calls", []))
    if event.role == "system":
        return SystemMessage(content=content, name=name)
    if event.role == "tool" and "tool_call_id" in extra:
        return ToolMessage(content=content, name=name, tool_call_id=extra["tool_call_id"])
    return ChatMessage(content=content, role=event.role, name=name)


class KithChatMessageHistory(BaseChatMessageHistory):
    """One conversation, kept in kith as the session ``session``.

    Messages stored here are ordinary kith memories: ``memory.retrieve``
    finds them, with their speaker (a message's ``name``) and role. With
    ``ingest=True`` they are ingested (entities and claims extracted).
    A message kept by kith stays there when ``clear`` is not called:
    ``clear`` forgets the session (tombstones; derived data removed).
    """

    def __init__(
        self,
        memory: MemoryApi,
        session: str,
        *,
        scope: Optional[str] = None,
        ingest: bool = False,
    ) -> None:
        self.memory = memory
        self.session = session
        self.scope = scope
        self.ingest = ingest

    @property
    def messages(self) -> List[BaseMessage]:  # type: ignore[override]
        return [
            _message(e)
            for e in self.memory.iter_events(scope=self.scope, session=self.session)
            if not e.forgotten
        ]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        bodies = [_body(m, self.session, self.scope) for m in messages]
        if not bodies:
            return
        # One transaction: the turns are kept together or not at all.
        if self.ingest:
            self.memory.ingest_many(bodies)
        else:
            self.memory.store_many(bodies)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        await asyncio.to_thread(self.add_messages, list(messages))

    async def aget_messages(self) -> List[BaseMessage]:
        return await asyncio.to_thread(lambda: self.messages)

    def clear(self) -> None:
        try:
            self.memory.forget(session=self.session, reason="LangChain chat history: clear")
        except NotFound:
            pass  # an empty history is already clear

    async def aclear(self) -> None:
        await asyncio.to_thread(self.clear)


class KithRetriever(BaseRetriever):
    """A LangChain retriever over kith's hybrid retrieval.

    Each ``Document`` is one result: ``page_content`` its text, and
    ``metadata`` ``speaker``, ``time``, ``score``, ``role``, ``session``,
    ``scope``, ``event_id``, ``node_id`` and ``rank``. ``budget``,
    ``limit``, ``scope``, ``session`` and ``roles`` are passed to
    ``retrieve``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any
    limit: int = 10
    budget: int = 1024
    scope: Optional[str] = None
    session: Optional[str] = None
    roles: Optional[List[str]] = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> List[Document]:
        hits = self.memory.retrieve(
            query,
            budget=self.budget,
            limit=self.limit,
            scope=self.scope,
            session=self.session,
            roles=self.roles,
        )
        return [
            Document(
                page_content=h.text,
                metadata={
                    "speaker": h.speaker,
                    "time": h.time,
                    "score": h.score,
                    "role": h.role,
                    "session": h.session,
                    "scope": h.scope,
                    "event_id": h.event_id,
                    "node_id": h.node_id,
                    "rank": h.rank,
                    "request_id": hits.request_id,
                },
            )
            for h in hits
        ]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> List[Document]:
        return await asyncio.to_thread(
            self._get_relevant_documents, query, run_manager=run_manager.get_sync()
        )
