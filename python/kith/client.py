""":class:`Client`: the methods of :class:`kith.Memory` over the HTTP API
of a running ``kith serve`` (``docs/http.md``), with the standard library
only."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Mapping, Optional

from ._api import MemoryApi, Progress, dumps
from .errors import ServerError, error_for

__all__ = ["Client"]

#: Most messages one batch request carries (the server's limit).
MAX_BATCH = 1000


class Client(MemoryApi):
    """kith's memory behind ``kith serve`` at ``base_url``::

        c = Client("http://127.0.0.1:7878", api_key=os.environ["KITH_KEY"])
        c.store("I moved to Lisbon.", speaker="Maya", session="s1")
        c.retrieve("Where does Maya live?").context

    With keys, the key decides the owner. A keyless server (loopback
    only) acts for ``owner`` (the ``X-Kith-Owner`` header), else for its
    ``--owner``. Errors raise the same :mod:`kith.errors` classes as the
    embedded engine, with the server's ``code`` and HTTP ``status``.
    """

    def __init__(
        self,
        base_url: str,
        api_key: Optional[str] = None,
        *,
        owner: Optional[str] = None,
        timeout: float = 60.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.owner = owner or ""
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"Client({self.base_url!r})"

    def _request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Optional[Mapping[str, Any]] = None,
    ) -> Any:
        url = self.base_url + path
        if query:
            params = {k: _param(v) for k, v in query.items() if v is not None}
            if params:
                url += "?" + urllib.parse.urlencode(params)
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        elif self.owner:
            headers["X-Kith-Owner"] = self.owner
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as e:
            raise _http_error(e, method, path) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise ServerError(f"cannot reach kith at {self.base_url}: {reason}") from None
        return json.loads(raw) if raw else None

    # -- transport: HTTP -----------------------------------------------------------

    def _store_batch(self, bodies: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        return self._request("POST", "/v1/events/batch", {"events": bodies})["receipts"]

    def _ingest_batch(
        self, bodies: List[Dict[str, Any]], defer: bool, first_person_owner: bool
    ) -> List[Dict[str, Any]]:
        body = {"events": bodies, "defer": defer, "first_person_owner": first_person_owner}
        return self._request("POST", "/v1/ingest/batch", body)["receipts"]

    def _retrieve(self, body: Dict[str, Any]) -> Dict[str, Any]:
        return self._request("POST", "/v1/retrieve", body)

    def _events_page(
        self, scope: Optional[str], session: Optional[str], after: int, limit: int
    ) -> Dict[str, Any]:
        query = {"scope": scope, "session_id": session, "after": after, "limit": limit}
        return self._request("GET", "/v1/events", query=query)

    def _event(self, event_id: str) -> Dict[str, Any]:
        return self._request("GET", f"/v1/events/{_segment(event_id)}")

    def _forget(
        self, selector: str, value: Optional[str], reason: str, dry_run: bool
    ) -> Dict[str, Any]:
        path = {
            "event": lambda: f"/v1/events/{_segment(value or '')}",
            "session": lambda: f"/v1/sessions/{_segment(value or '')}",
            "owner": lambda: "/v1/owner",
        }[selector]()
        return self._request("DELETE", path, query={"reason": reason, "dry_run": dry_run})

    def _organize(self, jobs: List[str], budget: Optional[int]) -> Dict[str, Any]:
        body: Dict[str, Any] = {"jobs": jobs}
        if budget:
            body["budget"] = budget
        return self._request("POST", "/v1/organize", body)

    def _aliases(self, status: Optional[str]) -> List[Dict[str, Any]]:
        proposals: List[Dict[str, Any]] = []
        after = None
        while True:
            query = {"status": status, "limit": 1000, "after": after}
            page = self._request("GET", "/v1/aliases", query=query)
            proposals.extend(page["proposals"])
            after = page.get("next_after")
            if after is None:
                return proposals

    def _undo(self, op: str) -> Dict[str, Any]:
        return self._request("POST", f"/v1/undo/{_segment(op)}")

    def _stats(self) -> Dict[str, Any]:
        return self._request("GET", "/v1/stats")

    def _import(
        self, bodies: List[Dict[str, Any]], batch_size: int, progress: Optional[Progress]
    ) -> Dict[str, Any]:
        size = min(batch_size, MAX_BATCH)
        report = {"messages": len(bodies), "created": 0, "existing": 0}
        for start in range(0, len(bodies), size):
            receipts = self._store_batch(bodies[start : start + size])
            created = sum(1 for r in receipts if r["created"])
            report["created"] += created
            report["existing"] += len(receipts) - created
            if progress is not None:
                progress(start + len(receipts), len(bodies))
        return report


def _param(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _segment(value: str) -> str:
    return urllib.parse.quote(str(value), safe="")


def _http_error(e: urllib.error.HTTPError, method: str, path: str) -> Exception:
    """The :mod:`kith.errors` exception for an error answer
    (``{"error": {"code", "message"}}``)."""
    try:
        payload = json.loads(e.read() or b"{}")
        error = payload["error"]
        code, message = str(error["code"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        code, message = "internal", f"{method} {path}: HTTP {e.code} {e.reason}"
    return error_for(code, message, status=e.code)
