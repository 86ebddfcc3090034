"""Token verification and the trusted-header rule, with a key made here (no services)."""

from __future__ import annotations

import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from app.auth import AuthError, Verifier
from app.settings import Settings

KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER = rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture
def verifier(tmp_path):
    pem = KEY.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    (tmp_path / "pub.pem").write_bytes(pem)
    return Verifier(Settings(auth_public_key_file=tmp_path / "pub.pem", auth_issuer="idp", auth_audience="desk",
                             auth_trusted_header="X-User", auth_trusted_proxies="10.0.0.0/8, 192.168.1.5"))


def token(key=KEY, alg="RS256", **claims) -> str:
    now = int(time.time())
    return jwt.encode({"iss": "idp", "aud": "desk", "sub": "e1001", "iat": now, "exp": now + 60, **claims}, key, alg)


def test_a_valid_token_names_its_employee(verifier):
    assert verifier.verify(token()) == "E1001"


@pytest.mark.parametrize(("tok", "reason"), [
    (lambda: token(exp=int(time.time()) - 3600), "expired"),
    (lambda: token(aud="other"), "audience"),
    (lambda: token(iss="evil"), "issuer"),
    (lambda: token(key=OTHER), "signature"),
    (lambda: token(sub="root"), "employee id"),
    (lambda: jwt.encode({"iss": "idp", "aud": "desk", "sub": "E1001"}, KEY, "RS256"), "'exp'"),
    (lambda: jwt.encode({"iss": "idp", "aud": "desk", "sub": "E1001", "exp": 9e9},
                        "a-shared-secret-of-32-bytes-long!", "HS256"), "algorithm"),
    (lambda: "not.a.jwt", "malformed"),
])
def test_bad_tokens_say_why(verifier, tok, reason):
    with pytest.raises(AuthError, match=reason):
        verifier.verify(tok())


def test_alg_none_is_refused_in_settings():
    with pytest.raises(ValueError):
        Verifier(Settings(auth_algorithms="none"))


async def test_trusted_header_only_from_a_configured_proxy(verifier):
    who = await verifier.identify({"X-User": "E1005"}, {}, "10.1.2.3")
    assert (who.user, who.via) == ("E1005", "proxy")
    assert (await verifier.identify({"X-User": "E1005"}, {}, "192.168.1.5")).user == "E1005"
    with pytest.raises(AuthError, match="no credential"):
        await verifier.identify({"X-User": "E1005"}, {}, "192.168.1.6")
    # from an untrusted address the header is ignored, the token decides
    who = await verifier.identify({"X-User": "E1005", "authorization": f"Bearer {token()}"}, {}, "8.8.8.8")
    assert (who.user, who.via) == ("E1001", "token")


async def test_session_cookie_and_scheme_errors(verifier):
    assert (await verifier.identify({}, {"helpdesk_session": token()}, None)).via == "session"
    with pytest.raises(AuthError, match="Bearer"):
        await verifier.identify({"authorization": "Basic dXNlcjpwYXNz"}, {}, None)
