"""Credentials never leave Sluice in clear text.

Every URL shown in a message, a log line or EXPLAIN goes through :func:`mask_url`;
free text that might echo a driver's message goes through :func:`mask_text`, which
also removes any password Sluice knows about (drivers sometimes quote the DSN). py4j
logs every command it sends to Spark at DEBUG, a password option's value included:
:func:`guard_py4j_logs` masks those values.
"""

from __future__ import annotations

import logging
import re
import threading

from sluice.urls import MASK, UrlError, mask_unparsed, parse_url

#: the scheme's length is bounded: unbounded, a long run of letters (a 1 MB literal in a remote
#: query) is rescanned from every position, quadratic time (minutes for 100 KB)
_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]{0,31}://)(?P<user>[^:/@\s]*):(?P<pw>[^@\s]*)@")
_KEYVALUE = re.compile(r"(?i)\b(password|passwd|pwd|token|secret)\s*=\s*('[^']*'|\"[^\"]*\"|[^\s&;]+)")
#: py4j sends one argument a line, a string as ``s<text>``: the string argument after one that
#: names a key Spark redacts (``spark.redaction.regex``'s default), as in ``option("password", ...)``
_PY4J_SECRET_ARGUMENT = re.compile(r"(?m)^(s[^\n]*(?i:secret|password|token|access[.]?key)[^\n]*\n)s[^\n]*")
_PY4J_LOGGERS = ("py4j.clientserver", "py4j.java_gateway")
_SECRET_NAME = re.compile(r"(?mi)^s[^\n]*(?:secret|password|token|access[.]?key)")
#: how py4j's two log lines begin, and a string answer (``!ys<text>``)
_COMMAND, _ANSWER = "Command to send: ", "Answer received: "
_STRING_ANSWER = re.compile(r"^(Answer received: !ys).*", re.S)


def mask_url(url: str) -> str:
    """Return ``url`` with any password replaced by ``***`` (user name kept); a URL that does
    not parse is shown with everything that could be a password masked."""
    try:
        return mask_text(parse_url(url).masked())
    except UrlError:
        return mask_text(mask_unparsed(url))


def mask_text(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Remove URL passwords, ``password=...`` pairs and any of ``secrets`` from ``text``."""
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
    text = _KEYVALUE.sub(lambda m: f"{m.group(1)}={MASK}", text)
    for secret in secrets:
        if secret:
            text = _as_token(secret).sub(MASK, text)
    return text


def _as_token(secret: str) -> re.Pattern[str]:
    """``secret`` where it stands as a whole token: a password ``x`` masks ``password x`` but
    not the x of ``does not exist``. An edge of the secret that is a word character must not
    touch another word character (one that is punctuation is its own boundary)."""
    before = r"(?<!\w)" if re.match(r"\w", secret[0]) else ""
    after = r"(?!\w)" if re.match(r"\w", secret[-1]) else ""
    return re.compile(before + re.escape(secret) + after)


class Py4jSecretFilter(logging.Filter):
    """Masks what py4j logs at DEBUG: in a command, every secret-named option's value and URL
    password; in the answer to a command that named a secret (``conf.get("...password")``),
    the value; and anywhere later, a value already seen as a secret (the JVM echoes options
    back, e.g. when Spark lists a catalog's configuration)."""

    def __init__(self) -> None:
        super().__init__()
        self._secrets: set[str] = set()
        self._asked = threading.local()  # py4j logs a command and its answer on the caller's thread

    def filter(self, record: logging.LogRecord) -> bool:
        if not isinstance(record.msg, str):
            return True
        text = record.msg
        if text.startswith(_COMMAND):
            for match in _PY4J_SECRET_ARGUMENT.finditer(text):
                self._secrets.add(match.group(0)[len(match.group(1)) + 1 :])
            self._asked.secret = _SECRET_NAME.search(text) is not None
            text = _PY4J_SECRET_ARGUMENT.sub(rf"\1s{MASK}", text)
        elif text.startswith(_ANSWER) and getattr(self._asked, "secret", False):
            self._asked.secret = False
            text = _STRING_ANSWER.sub(rf"\1{MASK}", text)
        for secret in self._secrets:  # a whole py4j string (``s<text>`` argument, ``!ys<text>`` answer)
            text = re.sub(rf"(?:(?<=\ns)|(?<=!ys)){re.escape(secret)}(?=\n|$)", MASK, text)
        record.msg = mask_text(text, tuple(self._secrets))
        return True


def guard_py4j_logs() -> None:
    """Install :class:`Py4jSecretFilter` on py4j's loggers (once per process)."""
    for name in _PY4J_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, Py4jSecretFilter) for f in logger.filters):
            logger.addFilter(Py4jSecretFilter())
