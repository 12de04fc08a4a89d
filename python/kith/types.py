"""What kith's calls return: small typed views over the JSON answers.

The embedded engine and ``kith serve`` answer the same JSON shapes, so
:class:`kith.Memory` and :class:`kith.Client` build the same objects from
them. Each keeps the whole answer in ``raw`` (traces, timings, derivation
counts) for whoever needs more than the typed fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, overload

__all__ = ["StoreReceipt", "IngestReceipt", "Hit", "Retrieval", "Event"]


@dataclass(frozen=True)
class StoreReceipt:
    """What storing one message wrote. ``created`` is false when its
    ``source_id`` was stored before: nothing was written and the ids are
    the first call's."""

    event_id: str
    node_id: str
    created: bool

    @classmethod
    def from_json(cls, j: Dict[str, Any]) -> "StoreReceipt":
        return cls(event_id=j["event_id"], node_id=j["node_id"], created=j["created"])


@dataclass(frozen=True)
class IngestReceipt:
    """What ingesting one message did: the stored event, and where its
    extraction stands (``status``: ``complete``, ``pending`` for a deferred
    one, ``failed`` with ``error``). ``derivation`` counts what extraction
    wrote (entities, claims, ...)."""

    event_id: str
    node_id: str
    created: bool
    status: str
    derivation: Optional[Dict[str, Any]] = None
    error: Optional[str] = None

    @classmethod
    def from_json(cls, j: Dict[str, Any]) -> "IngestReceipt":
        return cls(
            event_id=j["event_id"],
            node_id=j["node_id"],
            created=j["created"],
            status=j["status"],
            derivation=j.get("derivation"),
            error=j.get("error"),
        )


@dataclass(frozen=True)
class Hit:
    """One piece of evidence a retrieval found: its text, who said it and
    when (``time``: RFC 3339, the event time, else when kith received it),
    and its fused score (higher is better)."""

    rank: int
    text: str
    speaker: Optional[str]
    time: str
    score: float
    role: str
    session: Optional[str]
    scope: str
    node_type: str
    node_id: str
    event_id: str
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def from_json(cls, j: Dict[str, Any]) -> "Hit":
        p = j["provenance"]
        return cls(
            rank=j["rank"],
            text=j["content"],
            speaker=p.get("speaker"),
            time=p.get("event_time") or p["ingested_at"],
            score=j["trace"]["score"],
            role=p["role"],
            session=p.get("session_id"),
            scope=j["scope"],
            node_type=j["node_type"],
            node_id=j["node_id"],
            event_id=p["event_id"],
            raw=j,
        )


class Retrieval(Sequence[Hit]):
    """A retrieval: the ranked hits (iterate or index it) and ``context``,
    the evidence packed into the token budget: put it in the prompt.
    ``request_id`` names the journaled receipt that explains it."""

    def __init__(self, raw: Dict[str, Any]) -> None:
        self.raw = raw
        self.request_id: str = raw["request_id"]
        self.query: str = raw["query"]
        self.context: str = raw["context"]
        self.tokens: int = raw["tokens"]
        self.token_budget: int = raw["token_budget"]
        self.hits: List[Hit] = [Hit.from_json(r) for r in raw["results"]]

    @overload
    def __getitem__(self, i: int) -> Hit: ...

    @overload
    def __getitem__(self, i: slice) -> List[Hit]: ...

    def __getitem__(self, i: Any) -> Any:
        return self.hits[i]

    def __len__(self) -> int:
        return len(self.hits)

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __repr__(self) -> str:
        return f"Retrieval(query={self.query!r}, hits={len(self.hits)}, tokens={self.tokens})"


@dataclass(frozen=True)
class Event:
    """One stored message. A forgotten one is a tombstone: ``forgotten``
    is true and its content, speaker and metadata are gone."""

    id: str
    seq: int
    content: str
    role: str
    speaker: Optional[str]
    session: Optional[str]
    scope: str
    time: Optional[str]
    ingested_at: str
    source_id: str
    metadata: Optional[Dict[str, Any]]
    forgotten: bool
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def from_json(cls, j: Dict[str, Any]) -> "Event":
        return cls(
            id=j["id"],
            seq=j["seq"],
            content=j["content"],
            role=j["role"],
            speaker=j.get("speaker"),
            session=j.get("session_id"),
            scope=j["scope"],
            time=j.get("event_time"),
            ingested_at=j["ingested_at"],
            source_id=j["source_id"],
            metadata=j.get("metadata"),
            forgotten=j.get("tombstone") is not None,
            raw=j,
        )


def parse_time(text: str) -> "datetime.datetime":
    """A kith timestamp (RFC 3339, up to nanoseconds, ``Z`` or an offset)
    as an aware ``datetime`` (microseconds; Python 3.9's ``fromisoformat``
    reads neither ``Z`` nor nine digits)."""
    import datetime
    import re

    m = re.fullmatch(r"(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", text)
    if not m:
        raise ValueError(f"not an RFC 3339 time with an offset: {text!r}")
    base, fraction, offset = m.groups()
    micros = (fraction or "").ljust(6, "0")[:6]
    offset = "+00:00" if offset == "Z" else offset
    return datetime.datetime.fromisoformat(f"{base}.{micros}{offset}")
