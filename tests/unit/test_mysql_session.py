"""PyMySQL logins without a TLS context per connection (sluice/sources/mysql.py)."""

from __future__ import annotations

import ssl

from sluice.sources import mysql


def test_the_preferred_mode_context_is_made_at_the_first_handshake_and_then_shared(monkeypatch) -> None:
    made = []
    real = ssl.create_default_context

    def counted(*a, **k):
        made.append(1)
        return real(*a, **k)

    monkeypatch.setattr(ssl, "create_default_context", counted)
    monkeypatch.setattr(mysql._PreferredTls, "context", None)
    session = mysql._session_class()
    stand_ins = [session._create_ssl_ctx(object.__new__(session), {}) for _ in range(3)]  # type: ignore[attr-defined]  # types-PyMySQL omits the private method Sluice overrides
    assert made == [] and all(isinstance(s, mysql._PreferredTls) for s in stand_ins)  # a server without TLS: none made
    wrapped = []

    class Fake:
        def wrap_socket(self, sock, server_hostname=None):
            wrapped.append((sock, server_hostname))
            return "tls"

    monkeypatch.setattr(mysql._PreferredTls, "context", Fake())
    assert [s.wrap_socket("sock", server_hostname="db") for s in stand_ins] == ["tls"] * 3
    assert wrapped == [("sock", "db")] * 3 and made == []


def test_the_real_context_is_pymysqls_own(monkeypatch) -> None:
    monkeypatch.setattr(mysql._PreferredTls, "context", None)
    session = mysql._session_class()
    stand_in = session._create_ssl_ctx(object.__new__(session), {})  # type: ignore[attr-defined]  # types-PyMySQL omits the private method Sluice overrides
    context = stand_in._make()
    assert isinstance(context, ssl.SSLContext) and context.verify_mode == ssl.CERT_NONE and not context.check_hostname
    explicit = session._create_ssl_ctx(object.__new__(session), {"verify_mode": "required"})  # type: ignore[attr-defined]  # types-PyMySQL omits the private method Sluice overrides
    assert isinstance(explicit, ssl.SSLContext) and explicit.verify_mode == ssl.CERT_REQUIRED
