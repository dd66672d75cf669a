"""Credentials never leave Sluice in clear text.

Every URL shown in a message, a log line or EXPLAIN goes through :func:`mask_url`;
free text that might echo a driver's message goes through :func:`mask_text`, which
also removes any password Sluice knows about (drivers sometimes quote the DSN).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

MASK = "***"
_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<user>[^:/@\s]*):(?P<pw>[^@\s]*)@")
_KEYVALUE = re.compile(r"(?i)\b(password|passwd|pwd|token|secret)\s*=\s*('[^']*'|\"[^\"]*\"|[^\s&;]+)")


def mask_url(url: str) -> str:
    """Return ``url`` with any password replaced by ``***`` (user name kept)."""
    parts = urlsplit(url)
    if parts.password is None:
        return mask_text(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    netloc = f"{parts.username}:{MASK}@{host}" if parts.username else f":{MASK}@{host}"
    return mask_text(urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)))


def mask_text(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Remove URL passwords, ``password=...`` pairs and any of ``secrets`` from ``text``."""
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
    text = _KEYVALUE.sub(lambda m: f"{m.group(1)}={MASK}", text)
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    return text
