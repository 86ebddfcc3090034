"""The demo identity provider: employees sign in with a password and get a signed JWT.

A company runs its own IdP (Entra ID, Okta, Keycloak); the help desk only verifies tokens against the
IdP's published keys (`app/auth.py`), so this module stands in for that IdP and nothing else:

- passwords are random per employee, generated when the demo database is built, stored as argon2
  hashes in the database; the plain ones go to one operator-readable file (mode 600) beside it, never
  into the repository;
- the RSA signing key is generated on first start under the run directory (mode 600);
- `POST /auth/login` checks the password and returns a short-lived RS256 token (`sub` = employee id);
- `GET /.well-known/jwks.json` publishes the public key, as every OIDC provider does.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import time
from pathlib import Path
from typing import Any

import jwt
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerifyMismatchError
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

HASHER = PasswordHasher()
# A well-formed hash to verify against when the employee id is unknown: the answer takes as long either way.
_DUMMY_HASH = HASHER.hash("not a password anyone has")


def credentials_file(db_path: Path) -> Path:
    """Where a demo database's passwords are written for the operator (`make run` points at the backend's).

    One file per database: another copy built in the same folder (the benchmark's facts) must never
    overwrite the passwords of the database the backend serves.
    """
    if db_path.stem == "demo-backend":
        return db_path.parent / "demo-credentials.json"
    return db_path.with_name(f"{db_path.stem}-credentials.json")


def issue_passwords(con: sqlite3.Connection, ids: list[str], db_path: Path) -> None:
    """A random password per employee: argon2 hashes in the database, the plain ones in a mode-600 file."""
    plain = {emp: secrets.token_urlsafe(9) for emp in ids}
    con.execute("CREATE TABLE IF NOT EXISTS credentials (employee TEXT PRIMARY KEY, hash TEXT NOT NULL)")
    con.executemany("INSERT OR REPLACE INTO credentials VALUES (?, ?)",
                    [(emp, HASHER.hash(pw)) for emp, pw in plain.items()])
    path = credentials_file(db_path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(plain, f, indent=1)


def check_password(con: sqlite3.Connection, employee: str, password: str) -> bool:
    """True when the password matches the employee's stored hash (constant work for unknown ids)."""
    row = con.execute("SELECT hash FROM credentials WHERE employee = ?", (employee,)).fetchone()
    try:
        return HASHER.verify(row[0] if row else _DUMMY_HASH, password) and row is not None
    except (VerifyMismatchError, InvalidHashError):
        return False


class Signer:
    """The provider's RSA key (generated once, kept under the run directory) and the tokens it signs."""

    def __init__(self, key_dir: Path, issuer: str, audience: str, ttl_s: int) -> None:
        self.issuer, self.audience, self.ttl_s = issuer, audience, ttl_s
        key_file = key_dir / "signing-key.pem"
        if not key_file.exists():
            key_dir.mkdir(parents=True, exist_ok=True)
            pem = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(pem)
        key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
        if not isinstance(key, rsa.RSAPrivateKey):
            raise ValueError(f"{key_file} is not an RSA private key")
        self.key = key
        self.jwk: dict[str, Any] = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        self.kid = jwt.PyJWK(self.jwk, "RS256").key_id or _thumbprint(self.jwk)
        self.jwk.update(kid=self.kid, use="sig", alg="RS256")

    def token(self, employee: str) -> dict[str, Any]:
        """A bearer token for one employee, OAuth2-style."""
        now = int(time.time())
        claims = {"iss": self.issuer, "aud": self.audience, "sub": employee, "iat": now, "nbf": now,
                  "exp": now + self.ttl_s, "jti": secrets.token_urlsafe(12)}
        return {"access_token": jwt.encode(claims, self.key, "RS256", headers={"kid": self.kid}),
                "token_type": "bearer", "expires_in": self.ttl_s}

    def jwks(self) -> dict[str, Any]:
        """The public key set verifiers fetch."""
        return {"keys": [self.jwk]}


def _thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638 thumbprint of an RSA JWK: a stable key id."""
    import base64
    import hashlib

    canonical = json.dumps({k: jwk[k] for k in ("e", "kty", "n")}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()
