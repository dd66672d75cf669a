"""Source URLs: the one parser every part of Sluice reads a connection string with.

Why not ``urllib.parse``: its ``urlsplit`` reads ``mysql://root:pa/ss@host`` as the host
``root`` with the port ``pa``, and asking for that port raises a ``ValueError`` that quotes
part of the password. Each caller then guessed for itself. Here a URL is read once, by
RFC 3986's rules, and anything it cannot read is a :class:`UrlError` whose message shows
the URL with everything that could be a password masked.

What is accepted: ``scheme://[user[:password]@]host[:port][/path][?query]``, and file URLs
(``sqlite:///relative.db``, ``sqlite:////abs.db``) with an empty authority. The user
information ends at the *last* ``@`` before the first ``/``, ``?`` or ``#``, so a password
may hold ``@``, ``:``, ``[`` and ``]`` as typed; ``/``, ``?`` and ``#`` end the authority, so a
password holding them must be percent-encoded (``%2F``, ``%3F``, ``%23``). A URL where one of
them was left in a password is refused rather than read another way: an ``@`` after a host
that has no user information would otherwise send the login to the wrong host (``u:12/x@h``
reads as the host ``u``, port 12), so an '@' after a host is refused whatever comes before
it (write ``%40``). A fragment is refused for the same reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote

from sluice.errors import ConfigError

MASK = "***"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}")
#: host name characters: RFC 3986 also allows sub-delimiters (``!$&'()*+,;=``), which no real
#: host holds but a password does, so a host made of them is refused rather than looked up
_REG_NAME = re.compile(r"[A-Za-z0-9\-._~%]*")
_IPV6 = re.compile(r"[0-9A-Fa-f:.]+(%25[A-Za-z0-9\-._~%]+)?")
_PERCENT_HINT = (
    "a password holding '/', '?' or '#' must be percent-encoded (%2F, %3F, %23), "
    "or given apart from the URL (attach's password argument, a catalog's password_env)"
)


class UrlError(ConfigError):
    """A connection string Sluice cannot read; the message never holds its password."""


@dataclass(frozen=True)
class SourceUrl:
    """A parsed connection string. ``username`` and ``password`` are percent-decoded and
    ``raw_password`` is the password as written (a message could echo either spelling). The
    host stays as written (an IPv6 address without its brackets): decoding it could turn
    ``%40`` into an '@' that a URL rebuilt from it would read as a user name."""

    text: str = field(repr=False)
    scheme: str
    username: str | None
    password: str | None = field(repr=False)
    raw_password: str | None = field(repr=False)
    host: str | None
    port: int | None
    path: str
    query: str

    @property
    def options(self) -> dict[str, str]:
        """The query string's options, decoded; the last of a repeated key wins."""
        return dict(parse_qsl(self.query, keep_blank_values=True))

    @property
    def database(self) -> str | None:
        """The path without its leading ``/``, decoded (a MySQL database, a PostgreSQL dbname)."""
        return unquote(self.path[1:]) or None

    @property
    def url_host(self) -> str:
        """The host as a URL writes it (an IPv6 address in brackets)."""
        host = self.host or ""
        return f"[{host}]" if ":" in host else host

    @property
    def netloc_host(self) -> str:
        """``host[:port]`` as a URL writes it."""
        return f"{self.url_host}:{self.port}" if self.port is not None else self.url_host

    def secrets(self) -> tuple[str, ...]:
        """Every spelling of the URL's password (as written, and decoded)."""
        return tuple(dict.fromkeys(s for s in (self.raw_password, self.password) if s))

    def rebuilt(self, password: str | None) -> str:
        """The URL with ``password`` in place of its own (None: no password)."""
        user = _raw_userinfo(self.text)[0] if self.username is not None else None
        if user is None:
            userinfo = f":{password}@" if password is not None else ""
        else:
            userinfo = f"{user}:{password}@" if password is not None else f"{user}@"
        query = f"?{self.query}" if self.query else ""
        return f"{self.scheme}://{userinfo}{self.netloc_host}{self.path}{query}"

    def masked(self) -> str:
        """The URL as shown to people: the password replaced by ``***``."""
        return self.rebuilt(MASK) if self.password is not None else self.rebuilt(None)

    def without_password(self) -> str:
        return self.rebuilt(None)


def parse_url(text: str) -> SourceUrl:
    """Read ``text`` as a source URL, or raise :class:`UrlError` showing it masked."""
    if not isinstance(text, str):
        raise UrlError("a source URL must be a string like scheme://... (the value is not shown)")
    scheme, sep, rest = text.partition("://")
    if not sep or not _SCHEME.fullmatch(scheme):
        raise UrlError("a source URL must look like scheme://... (the value is not shown)")
    cut = _authority_end(rest)
    authority, tail = rest[:cut], rest[cut:]
    path, _, query = tail.partition("?")
    if "#" in tail:
        raise UrlError(f"cannot read the URL {mask_unparsed(text)}: it holds a '#'; {_PERCENT_HINT}")
    at = authority.rfind("@")
    userinfo, hostport = (authority[:at], authority[at + 1 :]) if at >= 0 else (None, authority)
    if authority and "@" in tail:
        raise UrlError(f"cannot read the URL {mask_unparsed(text)}: an '@' follows the host; {_PERCENT_HINT}")
    username = raw_password = None
    if userinfo is not None:
        username, colon, raw = userinfo.partition(":")
        raw_password = raw if colon else None
    host, port = _host_port(hostport, text)
    return SourceUrl(
        text,
        scheme.lower(),
        unquote(username) if username is not None else None,
        unquote(raw_password) if raw_password is not None else None,
        raw_password,
        host,
        port,
        path,
        query,
    )


def parse_source_url(name: str, text: str) -> SourceUrl:
    """:func:`parse_url` for the source ``name``: its errors name the source."""
    try:
        return parse_url(text)
    except UrlError as error:
        raise UrlError(f"source {name!r}: {error}") from None


def _authority_end(rest: str) -> int:
    """Where the authority ends: the first '/', '?' or '#' (RFC 3986, section 3.2)."""
    ends = [i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0]
    return min(ends) if ends else len(rest)


def _host_port(hostport: str, text: str) -> tuple[str | None, int | None]:
    """Host (IPv6 without brackets) and port; messages never quote a bad port, which
    may be part of a password (``u:pa/ss@h`` has the "port" ``pa``)."""
    if hostport.startswith("["):
        close = hostport.find("]")
        if close < 0 or not _IPV6.fullmatch(hostport[1:close]):
            raise UrlError(f"cannot read the URL {mask_unparsed(text)}: a malformed IPv6 host in [...]")
        host, after = hostport[1:close], hostport[close + 1 :]
        if after and not after.startswith(":"):
            raise UrlError(f"cannot read the URL {mask_unparsed(text)}: text after the IPv6 host's ']'")
        port_text = after[1:] if after else None
    else:
        host, colon, port_text_raw = hostport.partition(":")
        port_text = port_text_raw if colon else None
        if not _REG_NAME.fullmatch(host):
            raise UrlError(f"cannot read the URL {mask_unparsed(text)}: the host holds characters a host name cannot")
    if port_text is None or port_text == "":
        return host or None, None
    digits = port_text.lstrip("0")
    if not (port_text.isascii() and port_text.isdigit()) or len(digits) > 5 or not 0 < int(digits or "0") < 65536:
        raise UrlError(
            f"cannot read the URL {mask_unparsed(text)}: the port is not a number from 1 to 65535 "
            f"(the value is not shown); {_PERCENT_HINT}"
        )
    return host or None, int(digits)


def _raw_userinfo(text: str) -> tuple[str | None, str | None]:
    """(user, password) as written in ``text``, by the same rules as :func:`parse_url`."""
    rest = text.partition("://")[2]
    authority = rest[: _authority_end(rest)]
    at = authority.rfind("@")
    if at < 0:
        return None, None
    user, colon, password = authority[:at].partition(":")
    return user, password if colon else None


def url_secrets(text: str) -> tuple[str, ...]:
    """Every spelling of the password ``text`` may hold, even when it does not parse: then the
    user information after its first ':' up to the last '@', and a port that is not a number."""
    try:
        return parse_url(text).secrets()
    except UrlError:
        pass
    rest = text.partition("://")[2]
    at = rest.rfind("@")
    if at >= 0:
        password = rest[:at].partition(":")[2]
    else:
        hostport = rest[: _authority_end(rest)]
        password = hostport.rpartition(":")[2] if ":" in hostport and not hostport.endswith("]") else ""
    return tuple(dict.fromkeys(s for s in (password, unquote(password)) if s and not s.isdigit()))


def mask_unparsed(text: str) -> str:
    """``text`` shown with everything that could be a password masked, for a URL that does not
    parse: the user information after its first ':' up to the last '@' of the whole text
    (before the authority's end if the password held a '/'), and any port that is not a number."""
    scheme, sep, rest = text.partition("://")
    if not sep:
        return MASK
    at = rest.rfind("@")
    if at >= 0:
        user = rest[:at].split(":", 1)[0].split("/", 1)[0]
        return f"{scheme}://{user}:{MASK}@{_mask_port(rest[at + 1 :])}"
    return f"{scheme}://{_mask_port(rest)}"


def _mask_port(rest: str) -> str:
    cut = _authority_end(rest)
    hostport, tail = rest[:cut], rest[cut:]
    host, colon, port = hostport.rpartition(":") if not hostport.endswith("]") else (hostport, "", "")
    if colon and not (port.isascii() and port.isdigit()):
        return f"{host}:{MASK}{tail}"
    return hostport + tail
