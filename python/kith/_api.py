"""The methods :class:`kith.Memory` and :class:`kith.Client` share.

Both subclass :class:`MemoryApi`, which turns Python arguments into the
request bodies of kith's HTTP API (``docs/http.md``) and its JSON answers
into :mod:`kith.types`. A subclass only moves bodies: the engine in this
process (``Memory``) or HTTP to ``kith serve`` (``Client``). So the two
have the same methods, arguments, results and errors by construction.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Union,
)

from .errors import InvalidInput
from .types import Event, IngestReceipt, Retrieval, StoreReceipt

__all__ = ["MemoryApi", "Message", "Progress", "TimeLike"]

#: A time: RFC 3339 text with an offset, or a timezone-aware datetime.
TimeLike = Union[str, _dt.datetime]
#: A message for the ``*_many`` and import methods: a mapping with
#: ``content`` and any of ``role``, ``speaker``, ``session``, ``scope``,
#: ``time``, ``source_id``, ``metadata``.
Message = Mapping[str, Any]
#: ``progress(done, total)``: messages imported so far, of how many.
Progress = Callable[[int, int], Any]

DEFAULT_JOBS = ("deduplicate", "alias_resolve")

_MESSAGE_KEYS = {"content", "role", "speaker", "session", "scope", "time", "source_id", "metadata"}


def _time(value: Optional[TimeLike], name: str) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            raise InvalidInput(
                f"{name}: {value.isoformat()} has no timezone; "
                "kith stores instants (use datetime.now(timezone.utc) or add tzinfo)"
            )
        return value.isoformat()
    raise InvalidInput(f"{name}: expected RFC 3339 text or a datetime, not {type(value).__name__}")


def _check_finite(value: Any, path: str) -> None:
    """JSON has no NaN or Infinity: name the first one, as the engine does."""
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput(f"{path} is {value}; JSON numbers must be finite")
    if isinstance(value, Mapping):
        for k, v in value.items():
            _check_finite(v, f"{path}.{k}")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_finite(v, f"{path}[{i}]")


def message_body(
    content: str,
    role: str = "user",
    speaker: Optional[str] = None,
    session: Optional[str] = None,
    scope: Optional[str] = None,
    time: Optional[TimeLike] = None,
    source_id: Optional[str] = None,
    metadata: Optional[Mapping[str, Any]] = None,
) -> Dict[str, Any]:
    """The HTTP API's message body for these arguments."""
    if not isinstance(content, str):
        raise InvalidInput(f"content: expected text, not {type(content).__name__}")
    body: Dict[str, Any] = {"content": content, "role": role}
    for key, value in (
        ("speaker", speaker),
        ("session_id", session),
        ("scope", scope),
        ("event_time", _time(time, "time")),
        ("source_id", source_id),
    ):
        if value is not None:
            body[key] = value
    if metadata is not None:
        if not isinstance(metadata, Mapping):
            raise InvalidInput(f"metadata: expected a mapping, not {type(metadata).__name__}")
        _check_finite(metadata, "metadata")
        body["metadata"] = dict(metadata)
    return body


def _message(m: Message, i: int) -> Dict[str, Any]:
    if not isinstance(m, Mapping):
        raise InvalidInput(f"messages[{i}]: expected a mapping, not {type(m).__name__}")
    unknown = set(m) - _MESSAGE_KEYS
    if unknown:
        raise InvalidInput(
            f"messages[{i}]: unknown field(s) {', '.join(sorted(unknown))} "
            f"(expected {', '.join(sorted(_MESSAGE_KEYS))})"
        )
    if "content" not in m:
        raise InvalidInput(f"messages[{i}]: content is missing")
    return message_body(**m)


def dumps(value: Any) -> str:
    """JSON text for a request (already checked to be finite)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


class MemoryApi:
    """kith's memory for one owner. Subclasses move the request bodies."""

    # -- what a subclass provides ------------------------------------------------

    def _store_batch(self, bodies: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        raise NotImplementedError

    def _ingest_batch(
        self, bodies: List[Dict[str, Any]], defer: bool, first_person_owner: bool
    ) -> List[Dict[str, Any]]:
        raise NotImplementedError

    def _retrieve(self, body: Dict[str, Any]) -> Dict[str, Any]:
        raise NotImplementedError

    def _events_page(
        self, scope: Optional[str], session: Optional[str], after: int, limit: int
    ) -> Dict[str, Any]:
        raise NotImplementedError

    def _event(self, event_id: str) -> Dict[str, Any]:
        raise NotImplementedError

    def _forget(
        self, selector: str, value: Optional[str], reason: str, dry_run: bool
    ) -> Dict[str, Any]:
        raise NotImplementedError

    def _organize(self, jobs: List[str], budget: Optional[int]) -> Dict[str, Any]:
        raise NotImplementedError

    def _aliases(self, status: Optional[str]) -> List[Dict[str, Any]]:
        raise NotImplementedError

    def _undo(self, op: str) -> Dict[str, Any]:
        raise NotImplementedError

    def _stats(self) -> Dict[str, Any]:
        raise NotImplementedError

    def _import(
        self, bodies: List[Dict[str, Any]], batch_size: int, progress: Optional[Progress]
    ) -> Dict[str, Any]:
        raise NotImplementedError

    #: The owner this memory acts for.
    owner: str

    # -- the API -------------------------------------------------------------------

    def store(
        self,
        content: str,
        *,
        role: str = "user",
        speaker: Optional[str] = None,
        session: Optional[str] = None,
        scope: Optional[str] = None,
        time: Optional[TimeLike] = None,
        source_id: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
    ) -> StoreReceipt:
        """Stores one message verbatim (no extraction): its event and a
        note that retrieval finds. ``role`` is ``user``, ``participant``,
        ``assistant``, ``tool`` or ``system``; ``speaker`` the person
        behind the turn; ``time`` when it was said. The same ``source_id``
        again writes nothing and answers the first ids."""
        body = message_body(content, role, speaker, session, scope, time, source_id, metadata)
        return StoreReceipt.from_json(self._store_batch([body])[0])

    def store_many(self, messages: Iterable[Message]) -> List[StoreReceipt]:
        """Stores several messages in one transaction: all are checked
        first, and either every new one is written or none is."""
        bodies = [_message(m, i) for i, m in enumerate(messages)]
        if not bodies:
            return []
        return [StoreReceipt.from_json(r) for r in self._store_batch(bodies)]

    def ingest(
        self,
        content: str,
        *,
        role: str = "user",
        speaker: Optional[str] = None,
        session: Optional[str] = None,
        scope: Optional[str] = None,
        time: Optional[TimeLike] = None,
        source_id: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        defer: bool = False,
        first_person_owner: bool = False,
    ) -> IngestReceipt:
        """Stores one message and extracts entities and claims from it
        (who is who, what they said about themselves), with the offline
        heuristic extractor unless the memory was given an LLM. ``defer``
        only admits it (extract later with :meth:`process`, or a server's
        worker); ``first_person_owner`` says a user turn's "I" is the
        owner."""
        body = message_body(content, role, speaker, session, scope, time, source_id, metadata)
        return IngestReceipt.from_json(self._ingest_batch([body], defer, first_person_owner)[0])

    def ingest_many(
        self,
        messages: Iterable[Message],
        *,
        defer: bool = False,
        first_person_owner: bool = False,
    ) -> List[IngestReceipt]:
        """Ingests several messages: all admitted in one transaction, then
        extracted one by one (or later, with ``defer``)."""
        bodies = [_message(m, i) for i, m in enumerate(messages)]
        if not bodies:
            return []
        return [
            IngestReceipt.from_json(r)
            for r in self._ingest_batch(bodies, defer, first_person_owner)
        ]

    def retrieve(
        self,
        query: str,
        *,
        budget: int = 1024,
        limit: int = 10,
        scope: Optional[str] = None,
        session: Optional[str] = None,
        roles: Optional[Sequence[str]] = None,
        since: Optional[TimeLike] = None,
        until: Optional[TimeLike] = None,
        as_of: Optional[TimeLike] = None,
        asked_at: Optional[TimeLike] = None,
        without: Sequence[str] = (),
        record: bool = True,
    ) -> Retrieval:
        """The evidence for ``query``: hybrid retrieval (lexical, vectors
        when the memory embeds, the entity graph, session neighbours,
        dates the question names, the named speaker), ranked, and packed
        into ``budget`` cl100k tokens as ``context``. Filters: ``scope``,
        ``session``, ``roles``, ``since``/``until`` (when it was said),
        ``as_of`` (the memory as it was then). ``asked_at``: when the
        question is asked, for its relative dates ("a month ago"; default:
        ``as_of``, else the newest turn). ``without`` turns paths off
        (``vector``, ``recency``, ...). ``record`` journals a receipt."""
        filters: Dict[str, Any] = {}
        if scope is not None:
            filters["scope"] = scope
        if session is not None:
            filters["session_id"] = session
        if roles:
            filters["roles"] = list(roles)
        if since is not None:
            filters["time_from"] = _time(since, "since")
        if until is not None:
            filters["time_to"] = _time(until, "until")
        if isinstance(without, str):
            without = [without]
        body: Dict[str, Any] = {
            "query": query,
            "token_budget": budget,
            "limit": limit,
            "filters": filters,
            "without": list(without),
            "record": record,
        }
        if as_of is not None:
            body["as_of"] = _time(as_of, "as_of")
        if asked_at is not None:
            body["asked_at"] = _time(asked_at, "asked_at")
        return Retrieval(self._retrieve(body))

    def events(
        self,
        *,
        scope: Optional[str] = None,
        session: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> List[Event]:
        """The owner's events (of one scope or session), oldest first; at
        most ``limit`` when given."""
        return list(self.iter_events(scope=scope, session=session, limit=limit))

    def iter_events(
        self,
        *,
        scope: Optional[str] = None,
        session: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> Iterator[Event]:
        """Like :meth:`events`, a page (1,000 events) at a time."""
        after, left = 0, limit
        while left is None or left > 0:
            size = 1000 if left is None else min(left, 1000)
            page = self._events_page(scope, session, after, size)
            for e in page["events"]:
                yield Event.from_json(e)
            if left is not None:
                left -= len(page["events"])
            if page.get("next_after") is None:
                return
            after = page["next_after"]

    def event(self, event_id: str) -> Event:
        """One of the owner's events (:class:`NotFound` for another
        owner's or a missing one)."""
        return Event.from_json(self._event(event_id))

    def forget(
        self,
        *,
        event: Optional[str] = None,
        session: Optional[str] = None,
        everything: bool = False,
        reason: str,
        dry_run: bool = False,
    ) -> Dict[str, Any]:
        """Erases one ``event``, a whole ``session``, or ``everything`` of
        the owner: the log keeps a tombstone, what was derived goes,
        journal records that quoted it are scrubbed, and kith checks the
        text is in no byte of the store. ``reason`` is required and kept.
        ``dry_run`` lists what would go. Answers the forget report."""
        chosen = [n for n, v in (("event", event), ("session", session)) if v is not None]
        if everything:
            chosen.append("everything")
        if len(chosen) != 1:
            raise InvalidInput(
                "forget: name exactly one of event=, session= or everything=True"
                + (f" (got {', '.join(chosen)})" if chosen else "")
            )
        if event is not None:
            return self._forget("event", event, reason, dry_run)
        if session is not None:
            return self._forget("session", session, reason, dry_run)
        return self._forget("owner", None, reason, dry_run)

    def organize(
        self, jobs: Sequence[str] = DEFAULT_JOBS, *, budget: Optional[int] = None
    ) -> Dict[str, Any]:
        """Runs the organizer: merges exact duplicates and known aliases
        (each undoable with :meth:`undo`), proposes semantic look-alikes
        for review (:meth:`aliases`). Answers its report."""
        if isinstance(jobs, str):
            jobs = [jobs]
        return self._organize(list(jobs), budget)

    def aliases(self, status: Optional[str] = None) -> List[Dict[str, Any]]:
        """The alias proposals waiting for (or past) a review, oldest
        first; ``status`` is ``pending``, ``accepted`` or ``rejected``."""
        return self._aliases(status)

    def undo(self, op: str) -> Dict[str, Any]:
        """Undoes a merge, an accepted alias, a correction or a claim
        edit by its operation id (:class:`Conflict` when a later change
        depends on it)."""
        return self._undo(op)

    def stats(self) -> Dict[str, Any]:
        """Counts of the owner's events, nodes, edges and journal records."""
        return self._stats()

    def import_messages(
        self,
        messages: Iterable[Message],
        *,
        batch_size: int = 1000,
        progress: Optional[Progress] = None,
    ) -> Dict[str, Any]:
        """Imports many messages: every one checked first (one bad message:
        nothing written), then batches of ``batch_size``, each durable on
        its own. ``progress(done, total)`` is called after each batch.
        Answers ``{messages, created, existing}``."""
        if batch_size < 1:
            raise InvalidInput(f"batch_size must be at least 1, not {batch_size}")
        bodies = [_message(m, i) for i, m in enumerate(messages)]
        return self._import(bodies, batch_size, progress)

    def import_jsonl(
        self,
        path: Union[str, "os.PathLike[str]"],
        *,
        batch_size: int = 1000,
        progress: Optional[Progress] = None,
    ) -> Dict[str, Any]:
        """Imports a JSONL file, one message a line with the fields of
        :meth:`import_messages` (``content``, ``role``, ``session``, ...)."""
        messages = []
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    messages.append(json.loads(line))
                except ValueError as e:
                    raise InvalidInput(f"{os.fspath(path)} line {n}: not JSON ({e})") from None
        return self.import_messages(messages, batch_size=batch_size, progress=progress)
