"""The protected MCP server of `cargo xtask interop`'s OAuth rows, on the
official Python SDK (`mcp==2.3.0`, the virtualenv of the other rows).

It is set up as the SDK's documentation has a resource server set up:
`AuthSettings` (the authorization server, this server's URL, the `mcp`
scope required) and a `TokenVerifier`, here one that asks the
authorization server's introspection endpoint (RFC 7662) about every token,
as it must for oidc-provider's opaque tokens, and accepts only active
tokens issued for this very resource. The SDK then serves the protected
resource metadata (RFC 9728) naming the authorization server, and its
bearer middleware answers 401 with a `Bearer` challenge.

By default the resource knows only `Bearer`, as the SDK's middleware does:
a request with `Authorization: DPoP …` is refused. With `--dpop` it also
accepts DPoP-bound tokens (RFC 9449): its metadata lists ES256 in
`dpop_signing_alg_values_supported`, and a small ASGI layer in front of the
SDK checks each request's DPoP proof (an ES256 JWT signed by the key in its
header, for this method and URL, recent, not replayed, with `ath` the hash
of the token) and hands the token on to the SDK as a bearer token with the
proven key's thumbprint aside; the verifier then requires the token's
`cnf.jkt` (from introspection) to be that thumbprint. A bound token sent
as `Bearer`, or with another key's proof, is refused.

Each accepted or refused token is logged on stderr (`accepted bearer`,
`accepted dpop`, `refused …`), which the rows read.

Run: `python resource_server.py PORT --issuer URL --secret SECRET [--dpop]`.
"""

from __future__ import annotations

import argparse
import base64
import contextvars
import hashlib
import json
import sys
import time
import urllib.parse
import urllib.request
from typing import Any

import anyio
import jwt
import uvicorn
from jwt.algorithms import ECAlgorithm
from mcp.server import MCPServer
from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.auth.settings import AuthSettings
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.routing import Route

# The thumbprint of the key whose proof came with this request's token, set
# by `DpopLayer` for the verifier to compare with the token's `cnf.jkt`.
PROVEN_KEY: contextvars.ContextVar[str | None] = contextvars.ContextVar("proven_key", default=None)

# How far a proof's `iat` may be from now.
PROOF_WINDOW = 300


def say(line: str) -> None:
    print(f"resource: {line}", file=sys.stderr, flush=True)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class IntrospectionVerifier:
    """A `TokenVerifier` asking the authorization server about each token."""

    def __init__(self, issuer: str, secret: str, resource: str):
        self.endpoint = f"{issuer}/token/introspection"
        self.credentials = "Basic " + base64.b64encode(f"mcp-resource:{secret}".encode()).decode()
        self.resource = resource

    def _introspect(self, token: str) -> dict[str, Any]:
        request = urllib.request.Request(
            self.endpoint,
            data=urllib.parse.urlencode({"token": token, "token_type_hint": "access_token"}).encode(),
            headers={"authorization": self.credentials, "accept": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 (loopback)
            return json.load(answer)

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            body = await anyio.to_thread.run_sync(self._introspect, token)
        except Exception as e:  # noqa: BLE001 (an unreachable AS refuses the token)
            say(f"refused: introspection failed: {e}")
            return None
        if not body.get("active"):
            say("refused: inactive token")
            return None
        audience = body.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if self.resource not in audiences:
            say(f"refused: token for {audience!r}")
            return None
        bound_to = (body.get("cnf") or {}).get("jkt")
        proven = PROVEN_KEY.get()
        if bound_to != proven:
            # Bound and sent as Bearer, bound to another key, or unbound and
            # sent as DPoP: all refused (RFC 9449 §7.1).
            say(f"refused: token bound to {bound_to!r}, proof for {proven!r}")
            return None
        say("accepted dpop" if proven else "accepted bearer")
        return AccessToken(
            token=token,
            client_id=body.get("client_id", ""),
            scopes=(body.get("scope") or "").split(),
            expires_at=body.get("exp"),
            resource=self.resource,
            subject=body.get("sub"),
            claims={"iss": body.get("iss")},
        )


class ProofError(Exception):
    pass


class DpopLayer:
    """Checks the DPoP proof of a request whose token comes with the DPoP
    scheme, then hands the token on as `Bearer` with the key's thumbprint
    in `PROVEN_KEY`."""

    def __init__(self, app: Any):
        self.app = app
        self.seen: dict[str, float] = {}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: list[tuple[bytes, bytes]] = list(scope["headers"])
        authorization = next((v.decode("latin-1") for k, v in headers if k == b"authorization"), "")
        if not authorization.lower().startswith("dpop "):
            await self.app(scope, receive, send)
            return
        token = authorization[5:].strip()
        proofs = [v.decode("latin-1") for k, v in headers if k == b"dpop"]
        host = next((v.decode("latin-1") for k, v in headers if k == b"host"), "")
        try:
            if len(proofs) != 1:
                raise ProofError(f"{len(proofs)} DPoP proofs")
            thumbprint = self.check(proofs[0], scope["method"], f"http://{host}{scope['path']}", token)
        except (ProofError, jwt.PyJWTError, ValueError, KeyError) as e:
            say(f"refused: DPoP proof: {e}")
            await refuse(send, str(e))
            return
        scope = dict(scope)
        scope["headers"] = [(k, v) for k, v in headers if k != b"authorization"] + [
            (b"authorization", f"Bearer {token}".encode("latin-1"))
        ]
        reset = PROVEN_KEY.set(thumbprint)
        try:
            await self.app(scope, receive, send)
        finally:
            PROVEN_KEY.reset(reset)

    def check(self, proof: str, method: str, url: str, token: str) -> str:
        header = jwt.get_unverified_header(proof)
        if header.get("typ") != "dpop+jwt" or header.get("alg") != "ES256":
            raise ProofError(f"typ {header.get('typ')!r}, alg {header.get('alg')!r}")
        jwk = header.get("jwk")
        if not isinstance(jwk, dict) or jwk.get("kty") != "EC" or "d" in jwk:
            raise ProofError("no public EC key in the proof's header")
        key = ECAlgorithm.from_jwk(json.dumps(jwk))
        claims = jwt.decode(
            proof,
            key=key,  # type: ignore[arg-type]
            algorithms=["ES256"],
            options={"verify_aud": False, "require": ["iat", "jti", "htm", "htu"]},
        )
        if claims["htm"] != method:
            raise ProofError(f"htm {claims['htm']!r} for a {method}")
        if claims["htu"].split("?")[0].rstrip("/") != url.rstrip("/"):
            raise ProofError(f"htu {claims['htu']!r} for {url}")
        now = time.time()
        if abs(now - float(claims["iat"])) > PROOF_WINDOW:
            raise ProofError("iat too far from now")
        if claims.get("ath") != b64url(hashlib.sha256(token.encode()).digest()):
            raise ProofError("ath is not the token's hash")
        self.seen = {j: t for j, t in self.seen.items() if now - t < 2 * PROOF_WINDOW}
        if claims["jti"] in self.seen:
            raise ProofError("replayed proof")
        self.seen[claims["jti"]] = now
        members = {name: jwk[name] for name in ("crv", "kty", "x", "y")}
        canonical = json.dumps(members, separators=(",", ":"), sort_keys=True)
        return b64url(hashlib.sha256(canonical.encode()).digest())


async def refuse(send: Any, why: str) -> None:
    body = json.dumps({"error": "invalid_dpop_proof", "error_description": why}).encode()
    challenge = f'DPoP error="invalid_dpop_proof", algs="ES256"'.encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", challenge),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="A protected MCP server (token introspection).")
    parser.add_argument("port", type=int)
    parser.add_argument("--issuer", required=True, help="the authorization server")
    parser.add_argument("--secret", required=True, help="this server's introspection secret")
    parser.add_argument("--dpop", action="store_true", help="accept DPoP-bound tokens, and say so")
    args = parser.parse_args(argv)

    resource = f"http://127.0.0.1:{args.port}/mcp"
    server = MCPServer(
        name="interop-python-protected",
        version="1.0.0",
        token_verifier=IntrospectionVerifier(args.issuer, args.secret, resource),
        auth=AuthSettings(
            issuer_url=args.issuer,  # type: ignore[arg-type] (a str keeps the exact issuer)
            resource_server_url=resource,  # type: ignore[arg-type]
            required_scopes=["mcp"],
            validate_token_resource=True,
        ),
    )

    @server.tool()
    def echo(text: str) -> str:
        """Returns the text it is given."""
        return text

    app: Any = server.streamable_http_app()
    if args.dpop:
        # The SDK's metadata has no DPoP fields to set: this route, ahead of
        # its own, serves the same document saying DPoP is accepted.
        metadata = ProtectedResourceMetadata(
            resource=resource,  # type: ignore[arg-type]
            authorization_servers=[args.issuer],  # type: ignore[list-item]
            scopes_supported=["mcp"],
            dpop_signing_alg_values_supported=["ES256"],
        )
        path = urllib.parse.urlparse(str(build_resource_metadata_url(AnyHttpUrl(resource)))).path
        handler = ProtectedResourceMetadataHandler(metadata)
        app.router.routes.insert(0, Route(path, endpoint=handler.handle, methods=["GET"]))
        app = DpopLayer(app)
    say(f"serving {resource} ({'Bearer and DPoP' if args.dpop else 'Bearer only'})")
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
