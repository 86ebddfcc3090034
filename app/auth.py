"""Who is asking: identity from a verified credential, never from a field the client fills in.

Three ways in, checked in this order for every HTTP request (the chat and the API alike):

1. **Trusted SSO proxy** (opt-in): when `AUTH_TRUSTED_HEADER` is set, the user in that header is taken,
   but only from a peer address in `AUTH_TRUSTED_PROXIES`; from anywhere else the header is ignored.
2. **Bearer token**: `Authorization: Bearer <JWT>`, verified with PyJWT against the issuer's JWKS (or a
   PEM public key): signature, `exp`, `nbf`, `iss` and `aud` are all required.
3. **Session cookie** (the chat): the same kind of token, set HttpOnly by the sign-in form.

Nothing else names the caller: a `user` in a request body is ignored. The CLI (`ask --user`) is an
operator tool on the server and does not pass through here.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import jwt

from app.settings import Settings
from tools.domain import EMPLOYEE_ID

log = logging.getLogger(__name__)
SESSION_COOKIE = "helpdesk_session"
# The one-line reason a client sees for each way a token fails (anything else: "malformed token").
_REASONS: list[tuple[type[Exception], str]] = [
    (jwt.ExpiredSignatureError, "token expired; sign in again"),
    (jwt.InvalidAudienceError, "token was issued for another audience"),
    (jwt.InvalidIssuerError, "token was issued by an untrusted issuer"),
    (jwt.InvalidSignatureError, "token signature is invalid"),
    (jwt.InvalidAlgorithmError, "token is signed with an algorithm that is not accepted"),
    (jwt.ImmatureSignatureError, "token is not valid yet"),
]


class AuthError(Exception):
    """A credential that does not identify anyone; `str()` is the one-line reason a client sees."""


@dataclass(frozen=True)
class Identity:
    """A verified caller."""

    user: str  # employee id, e.g. E1001
    via: str  # "token", "session" or "proxy"


class Verifier:
    """Checks tokens against the configured issuer; the JWKS is fetched once and cached by PyJWT."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.algorithms = [a.strip() for a in settings.auth_algorithms.split(",") if a.strip()]
        if not self.algorithms or any(a.lower() == "none" for a in self.algorithms):
            raise ValueError("AUTH_ALGORITHMS must name real signature algorithms")
        self.proxies = [ipaddress.ip_network(p.strip(), strict=False)
                        for p in settings.auth_trusted_proxies.split(",") if p.strip()]

    @cached_property
    def _jwks(self) -> jwt.PyJWKClient:
        return jwt.PyJWKClient(self.settings.jwks_url, cache_keys=True, lifespan=600, timeout=5)

    @cached_property
    def _public_key(self) -> str | None:
        path = self.settings.auth_public_key_file
        return path.read_text() if path else None

    def warm(self) -> None:
        """Fetch the issuer's signing keys now: the first requests after a start, arriving together, each fetched
        them (a blocking call on the thread pool, which the other requests' checks then queued behind). An issuer
        not reachable yet is no reason to skip the rest of the warm-up: the first request fetches them then.
        """
        if self._public_key is None:
            try:
                for key in self._jwks.get_signing_keys():
                    if key.key_id:
                        self._jwks.get_signing_key(key.key_id)
            except jwt.PyJWKClientConnectionError as exc:
                log.warning("the token issuer's keys are not reachable at %s yet (%s): fetched at the first "
                            "request", self.settings.jwks_url, exc)

    def _key(self, token: str) -> Any:
        if self._public_key is not None:
            return self._public_key
        try:
            return self._jwks.get_signing_key_from_jwt(token).key
        except jwt.PyJWKClientConnectionError as exc:
            log.error("cannot fetch the token issuer's keys from %s: %s", self.settings.jwks_url, exc)
            raise AuthError("the sign-in service's keys cannot be fetched right now; try again shortly") from exc
        except jwt.PyJWKClientError as exc:
            raise AuthError("token signed with an unknown key") from exc
        except jwt.DecodeError as exc:
            raise AuthError("malformed token") from exc

    def verify(self, token: str) -> str:
        """The employee id a token was issued for, or AuthError with the reason."""
        try:
            claims = jwt.decode(token, self._key(token), algorithms=self.algorithms,
                                audience=self.settings.auth_audience, issuer=self.settings.auth_issuer,
                                options={"require": ["exp", "iss", "aud", "sub"]}, leeway=30)
        except jwt.MissingRequiredClaimError as exc:
            raise AuthError(f"token lacks the '{exc.claim}' claim") from exc
        except jwt.InvalidTokenError as exc:
            raise AuthError(next((r for cls, r in _REASONS if isinstance(exc, cls)), "malformed token")) from exc
        return _employee(str(claims["sub"]))

    def trusted_peer(self, host: str | None) -> bool:
        """True when the request comes straight from a configured SSO proxy."""
        if not host or not self.proxies:
            return False
        try:
            addr = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(addr in net for net in self.proxies)

    async def identify(self, headers: Any, cookies: Any, peer: str | None) -> Identity:
        """The caller of one HTTP request (headers/cookies: mappings; peer: the client address)."""
        header = self.settings.auth_trusted_header
        if header and headers.get(header):
            if self.trusted_peer(peer):
                return Identity(_employee(headers[header]), "proxy")
            log.warning("ignored %s header from untrusted address %s", header, peer)
        auth = headers.get("authorization") or ""
        if auth:
            scheme, _, token = auth.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise AuthError("Authorization must be 'Bearer <token>'")
            return Identity(await asyncio.to_thread(self.verify, token.strip()), "token")
        if cookie := cookies.get(SESSION_COOKIE):
            return Identity(await asyncio.to_thread(self.verify, cookie), "session")
        raise AuthError("no credential: send 'Authorization: Bearer <token>' (sign in to get one)")


def _employee(value: str) -> str:
    """An employee id as the tools expect it; anything else is not an identity this desk serves."""
    user = value.strip().upper()
    if not EMPLOYEE_ID.fullmatch(user):
        raise AuthError("the credential does not name an employee id")
    return user
