"""LangGraph's long-term memory store over kith.

``KithStore`` is a ``langgraph.store.base.BaseStore``: give it to a graph
(``create_react_agent(model, tools, store=KithStore(memory))``,
``builder.compile(store=...)``) and ``put``/``get``/``search``/``delete``/
``list_namespaces`` keep items in kith, where they are retrieved with
kith's hybrid retrieval, journaled, and erasable.

How items map onto kith (``docs/python.md``):

- the store acts for the owner of the memory it is given (a
  :class:`kith.Memory`'s ``owner``, a :class:`kith.Client`'s key); one
  store per owner, e.g. ``KithStore(memory.for_owner(user_id))``;
- a namespace is a kith scope: ``("memories", "maya")`` is
  ``lg.memories.maya`` (LangGraph's labels have no ``.``; characters a
  scope cannot hold are escaped as ``@XX``);
- an item is a message in that scope whose text is what retrieval
  searches (the value's ``index`` fields, else its ``text``, ``content``,
  ``memory`` or ``data`` string, else its JSON) and whose metadata holds
  the key and the value. ``put`` appends a new version, ``get`` and
  ``search`` see the newest one, ``delete`` forgets every version (kith's
  erasure: tombstones, derived data removed).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from ._api import MemoryApi
from .errors import NotFound
from .types import Event, parse_time

__all__ = ["KithStore", "namespace_scope", "scope_namespace"]

_PREFIX = "lg"
_PLAIN = re.compile(r"[A-Za-z0-9_\-:]")
_TEXT_FIELDS = ("text", "content", "memory", "data")
_META = "langgraph"


def namespace_scope(namespace: Sequence[str]) -> str:
    """The kith scope of a LangGraph namespace."""
    labels = []
    for label in namespace:
        labels.append(
            "".join(
                c if _PLAIN.fullmatch(c) else "".join(f"@{b:02X}" for b in c.encode("utf-8"))
                for c in label
            )
        )
    return ".".join([_PREFIX, *labels])


def scope_namespace(scope: str) -> Optional[Tuple[str, ...]]:
    """The namespace of a scope ``namespace_scope`` made; ``None`` for
    any other scope."""
    parts = scope.split(".")
    if parts[0] != _PREFIX or len(parts) < 2:
        return None

    def decode(label: str) -> str:
        # "@XX" is one byte of a character's UTF-8; anything else is itself.
        out = bytearray()
        i = 0
        while i < len(label):
            if label[i] == "@":
                out.append(int(label[i + 1 : i + 3], 16))
                i += 3
            else:
                out += label[i].encode("ascii")
                i += 1
        return out.decode("utf-8")

    return tuple(decode(p) for p in parts[1:])


def _session(scope: str, key: str) -> str:
    """The session that holds one item's versions (a digest: keys are
    free text, and a session is named across scopes)."""
    return "lg-" + hashlib.sha256(f"{scope}\n{key}".encode("utf-8")).hexdigest()[:40]


def _text(value: Dict[str, Any], index: Optional[Sequence[str]]) -> str:
    if index:
        parts = [str(_field(value, f)) for f in index if _field(value, f) is not None]
        if parts:
            return "\n".join(parts)
    for f in _TEXT_FIELDS:
        if isinstance(value.get(f), str) and value[f].strip():
            return value[f]
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _field(value: Dict[str, Any], path: str) -> Any:
    cur: Any = value
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _matches(value: Dict[str, Any], filter: Optional[Dict[str, Any]]) -> bool:
    """LangGraph's filter: each key equal (or ``{"$eq"|"$ne"|"$gt"|...: x}``)."""
    if not filter:
        return True
    ops = {
        "$eq": lambda a, b: a == b,
        "$ne": lambda a, b: a != b,
        "$gt": lambda a, b: a is not None and a > b,
        "$gte": lambda a, b: a is not None and a >= b,
        "$lt": lambda a, b: a is not None and a < b,
        "$lte": lambda a, b: a is not None and a <= b,
    }
    for key, want in filter.items():
        have = _field(value, key)
        if isinstance(want, dict) and want and all(k in ops for k in want):
            if not all(ops[k](have, v) for k, v in want.items()):
                return False
        elif have != want:
            return False
    return True


class _Versions:
    """An item's live versions, oldest first."""

    def __init__(self, namespace: Tuple[str, ...], key: str) -> None:
        self.namespace = namespace
        self.key = key
        self.events: List[Event] = []

    def item(self, score: Optional[float] = None, search: bool = False) -> Item:
        newest = self.events[-1]
        value = newest.metadata[_META]["value"]  # type: ignore[index]
        created = parse_time(self.events[0].ingested_at)
        updated = parse_time(newest.ingested_at)
        if search:
            return SearchItem(self.namespace, self.key, value, created, updated, score)
        return Item(
            value=value, key=self.key, namespace=self.namespace, created_at=created, updated_at=updated
        )


def _meta(e: Event) -> Optional[Dict[str, Any]]:
    m = e.metadata.get(_META) if isinstance(e.metadata, dict) else None
    return m if isinstance(m, dict) and "key" in m else None


class KithStore(BaseStore):
    """A LangGraph ``BaseStore`` keeping items in kith (see the module's
    documentation for the mapping). ``memory`` is a :class:`kith.Memory`
    or a :class:`kith.Client`."""

    supports_ttl = False

    def __init__(self, memory: MemoryApi) -> None:
        self.memory = memory

    # -- BaseStore -----------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> List[Result]:
        results: List[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op.namespace, op.key))
            elif isinstance(op, PutOp):
                if op.value is None:
                    self._delete(op.namespace, op.key)
                else:
                    self._put(op.namespace, op.key, dict(op.value), op.index)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise TypeError(f"KithStore: unknown operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> List[Result]:
        # The engine's work (or the HTTP round trip) off the event loop.
        return await asyncio.to_thread(self.batch, list(ops))

    # -- the operations --------------------------------------------------------------

    def _versions(self, namespace: Tuple[str, ...], key: str) -> Optional[_Versions]:
        scope = namespace_scope(namespace)
        v = _Versions(tuple(namespace), key)
        for e in self.memory.iter_events(scope=scope, session=_session(scope, key)):
            m = _meta(e)
            if not e.forgotten and m is not None and m["key"] == key:
                v.events.append(e)
        return v if v.events else None

    def _get(self, namespace: Tuple[str, ...], key: str) -> Optional[Item]:
        v = self._versions(namespace, key)
        return v.item() if v else None

    def _put(
        self, namespace: Tuple[str, ...], key: str, value: Dict[str, Any], index: Any
    ) -> None:
        scope = namespace_scope(namespace)
        self.memory.store(
            _text(value, index if isinstance(index, list) else None),
            role="user",
            scope=scope,
            session=_session(scope, key),
            metadata={_META: {"key": key, "value": value}},
        )

    def _delete(self, namespace: Tuple[str, ...], key: str) -> None:
        scope = namespace_scope(namespace)
        try:
            self.memory.forget(session=_session(scope, key), reason="LangGraph store: delete")
        except NotFound:
            pass  # nothing stored under that key: deleting it is a no-op

    def _all(self, prefix: Tuple[str, ...]) -> Dict[Tuple[Tuple[str, ...], str], _Versions]:
        """Every live item under ``prefix``, by (namespace, key)."""
        items: Dict[Tuple[Tuple[str, ...], str], _Versions] = {}
        for e in self.memory.iter_events():
            ns = scope_namespace(e.scope)
            m = _meta(e)
            if e.forgotten or ns is None or m is None or ns[: len(prefix)] != tuple(prefix):
                continue
            items.setdefault((ns, m["key"]), _Versions(ns, m["key"])).events.append(e)
        return items

    def _search(self, op: SearchOp) -> List[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        if not op.query:
            live = [v for v in self._all(prefix).values()]
            live.sort(key=lambda v: v.events[-1].seq, reverse=True)
            found = [v.item(search=True) for v in live]
            found = [i for i in found if _matches(i.value, op.filter)]
            return found[op.offset : op.offset + op.limit]  # type: ignore[return-value]
        wanted = op.offset + op.limit
        # Results are what fits the budget: room for a full page of them.
        hits = self.memory.retrieve(op.query, limit=100, budget=16000, record=False)
        found: List[SearchItem] = []
        seen = set()
        for hit in hits:
            ns = scope_namespace(hit.scope)
            if ns is None or ns[: len(prefix)] != prefix:
                continue
            event = self.memory.event(hit.event_id)
            m = _meta(event)
            if m is None or (ns, m["key"]) in seen:
                continue
            v = self._versions(ns, m["key"])
            # Only the newest version of an item answers (at its own rank).
            if v is None or v.events[-1].id != event.id:
                continue
            seen.add((ns, m["key"]))
            item = v.item(score=hit.score, search=True)
            if _matches(item.value, op.filter):
                found.append(item)  # type: ignore[arg-type]
            if len(found) >= wanted:
                break
        return found[op.offset : op.offset + op.limit]

    def _list_namespaces(self, op: ListNamespacesOp) -> List[Tuple[str, ...]]:
        spaces = set()
        for (ns, _key) in self._all(()).keys():
            if not all(_condition(ns, c.match_type, tuple(c.path)) for c in op.match_conditions or ()):
                continue
            spaces.add(ns[: op.max_depth] if op.max_depth is not None else ns)
        ordered = sorted(spaces)
        return ordered[op.offset : op.offset + op.limit]


def _condition(ns: Tuple[str, ...], kind: str, path: Tuple[str, ...]) -> bool:
    if len(path) > len(ns):
        return False
    part = ns[: len(path)] if kind == "prefix" else ns[len(ns) - len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, part))
