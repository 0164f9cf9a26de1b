"""The explorer's door: what a request must be before any page sees it.

Three checks, made once for every request (:func:`install`):

* the ``Host`` it names: a server listening on a loopback address answers only to
  loopback names (``localhost``, ``127.0.0.1``, ``::1``, and the address it listens on),
  so that a page of another site cannot reach it through DNS rebinding; ``serve
  --allow-host NAME`` adds a name;
* a POST comes from the explorer's own pages: one whose ``Origin`` names another
  site, or that the browser marks cross-site, is refused (403), and its body is a
  form, a file upload or JSON (anything else 415);
* a body is at most :data:`MAX_BODY` bytes (413), read no further.

>>> loopback_names("127.0.0.1", ["games.local"])
('127.0.0.1', '::1', 'games.local', 'localhost')
>>> loopback_names("0.0.0.0", []) is None
True
>>> host_name("[::1]:8000"), host_name("LocalHost:80"), host_name("127.0.0.1")
('::1', 'localhost', '127.0.0.1')
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection, Sequence
from urllib.parse import urlsplit

from flask import Flask, request
from werkzeug.exceptions import BadRequest, Forbidden, UnsupportedMediaType

from dicegraph.record import MAX_BYTES

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")  # what a browser on this machine calls it
MAX_BODY = MAX_BYTES + 2**16  # the largest request body: a record, and a form's or an upload's framing
BODY_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data", "application/json")  # what a POST may send


def is_loopback(host: str) -> bool:
    """Return whether ``host`` (an address or ``localhost``) is one of this machine's loopback addresses.

    >>> is_loopback("127.0.0.2"), is_loopback("::1"), is_loopback("localhost"), is_loopback("0.0.0.0")
    (True, True, True, False)
    """
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def loopback_names(host: str, allowed: Sequence[str]) -> tuple[str, ...] | None:
    """Return the host names a server listening on ``host`` answers to (sorted): the loopback names, ``host`` and
    the ``allowed`` ones when ``host`` is a loopback address; None (any name) otherwise, unless names are
    ``allowed``, which are then the only ones besides ``host``."""
    if is_loopback(host):
        names = {*LOOPBACK_NAMES, host}
    elif allowed:
        names = {host}
    else:
        return None
    return tuple(sorted({host_name(name) for name in (*names, *allowed)}))


def host_name(header: str) -> str:
    """Return the host name of a ``Host`` header or an address's ``host:port``, lower-case, without port or
    brackets."""
    text = header.strip().lower()
    if text.startswith("["):
        return text[1:].partition("]")[0]
    return text.rpartition(":")[0] if text.count(":") == 1 else text


def install(app: Flask, hosts: Collection[str] | None = None) -> None:
    """Set the door's checks on ``app``: the bodies' limit, and the hosts (``hosts``: the names it answers to;
    None: any) and POSTs' origin and type, checked before every request."""
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
    app.config["MAX_FORM_MEMORY_SIZE"] = MAX_BODY

    @app.before_request
    def at_the_door() -> None:
        if hosts is not None and host_name(request.headers.get("Host", "")) not in hosts:
            raise BadRequest(f"this explorer answers to {', '.join(hosts)} only (dicegraph serve --allow-host "
                             "NAME adds a name)")
        if request.method != "POST":
            return
        origin = request.headers.get("Origin")
        if request.headers.get("Sec-Fetch-Site") == "cross-site" or (
                origin is not None and urlsplit(origin).netloc.lower() != request.host.lower()):
            raise Forbidden("a POST from another site is refused: post from the explorer's own pages")
        if request.mimetype not in BODY_TYPES:
            raise UnsupportedMediaType(f"a POST sends a form, a file or JSON ({', '.join(BODY_TYPES)}), not "
                                       f"{request.mimetype or 'a body of no type'}")
