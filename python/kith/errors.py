"""kith's errors as Python exceptions.

Every failure of a kith call raises a :class:`KithError`. Its subclass
says what kind of failure it is (the engine's ``ErrorKind``, or the HTTP
API's error code), so an agent can branch on it::

    try:
        memory.forget(event=event_id, reason="asked")
    except kith.NotFound:
        ...

The same classes are raised by the embedded engine (:class:`kith.Memory`)
and by :class:`kith.Client` for a server's answer, so code written for one
works with the other.
"""

from __future__ import annotations

from typing import Optional

__all__ = [
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
    "error_for",
]


class KithError(Exception):
    """A kith call failed. ``kind`` is the kind of failure (``invalid_input``,
    ``not_found``, ...); ``code`` the HTTP API's error code when a server
    answered (``undo_refused``, ...), else the kind; ``status`` the HTTP
    status when a server answered, else ``None``."""

    kind: str = "other"

    def __init__(
        self,
        message: str,
        kind: Optional[str] = None,
        code: Optional[str] = None,
        status: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if kind is not None:
            self.kind = kind
        self.code = code if code is not None else self.kind
        self.status = status


class InvalidInput(KithError, ValueError):
    """The input was refused (a bad role, a naive timestamp, NaN in
    metadata, an unknown field, an empty reason); nothing was written."""

    kind = "invalid_input"


class NotFound(KithError, LookupError):
    """No such event, node, session or record for this owner (another
    owner's ids answer exactly like missing ones)."""

    kind = "not_found"


class Conflict(KithError):
    """It exists already or contradicts what exists (an undo a later
    change depends on, a proposal decided otherwise)."""

    kind = "conflict"


class Busy(KithError):
    """The memory stayed locked by another writer too long; retry."""

    kind = "busy"


class Corrupted(KithError):
    """Stored data is damaged (``kith doctor`` says where)."""

    kind = "corrupted"


class StorageError(KithError):
    """The file system or the database failed."""

    kind = "io"


class Unsupported(KithError):
    """A pack or model this kith cannot use (a newer format, a missing
    embedding model)."""

    kind = "unsupported"


class Unavailable(KithError):
    """A service kith depends on (an embeddings endpoint, the model
    registry) could not be reached, timed out or rate limited; retry
    later."""

    kind = "unavailable"


class Upstream(KithError):
    """A service kith depends on answered, but not usefully (an HTTP error
    such as a wrong API key, a malformed answer)."""

    kind = "upstream"


class Unauthorized(KithError):
    """The server refused the API key (401), or the body named another
    owner (403)."""

    kind = "unauthorized"


class ServerError(KithError):
    """The server could not be reached, or failed in a way that is not
    one of kith's error kinds (a 500 ``internal``)."""

    kind = "server"


# The HTTP API's error codes (docs/http.md, "Errors") by class.
_CODES = {
    InvalidInput: {
        "invalid_input",
        "invalid_json",
        "reason_required",
        "invalid_assessment",
        "payload_too_large",
        "unsupported_media_type",
    },
    NotFound: {"not_found", "method_not_allowed"},
    Conflict: {
        "conflict",
        "review_conflict",
        "stale_proposal",
        "undo_refused",
        "copy_conflict",
        "not_admitted",
        "forgotten",
    },
    Busy: {"busy", "request_timeout"},
    Corrupted: {"corrupted"},
    Unsupported: {"unsupported"},
    Unavailable: {"unavailable"},
    Upstream: {"upstream"},
    Unauthorized: {"unauthorized", "forbidden"},
}


def error_for(code: str, message: str, status: Optional[int] = None) -> KithError:
    """The exception for an HTTP API error ``code`` (``ServerError`` for
    one kith does not list)."""
    for cls, codes in _CODES.items():
        if code in codes:
            return cls(message, code=code, status=status)
    return ServerError(message, code=code, status=status)
