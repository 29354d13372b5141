"""`didyma login` and `logout`, and the client every other command builds from the saved login."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
import time
from datetime import datetime, timezone
from typing import Any, TextIO

from . import sso
from . import _cli_store as store
from ._cli_output import plain
from .auth import ApiToken, ClientCredentials, TokenPair
from .client import Didyma
from .errors import NotAuthenticated, ValidationError


def client_from_store(args: argparse.Namespace) -> Didyma:
    """A client from DIDYMA_TOKEN (an API token) or the saved login."""
    state = store.load()
    urls = Didyma.urls_from(args.auth_url or state.get("auth_url"), args.private_url or state.get("private_url"), args.public_url or state.get("public_url"))
    if os.environ.get("DIDYMA_TOKEN"):
        return Didyma(urls, ApiToken(os.environ["DIDYMA_TOKEN"]))
    kind = state.get("kind")
    if kind == "api_token":
        return Didyma(urls, ApiToken(state["api_token"]))
    if kind == "client_credentials":
        return Didyma(urls, ClientCredentials(state["client_id"], state["client_secret"], state["workspace"]))
    if kind in ("password", "sso"):

        def keep(pair: TokenPair) -> None:
            store.save({**store.load(), "access": pair.access, "refresh": pair.refresh})

        return Didyma(urls, TokenPair(state.get("access"), state.get("refresh"), workspace=state.get("workspace"), on_refresh=keep))
    raise NotAuthenticated("Not logged in: run `didyma login` (or set DIDYMA_TOKEN to an API token).", "not_authenticated", 401)


def cmd_login(args: argparse.Namespace, _client: Any) -> Any:
    urls = Didyma.urls_from(args.auth_url, args.private_url, args.public_url)
    saved: dict[str, Any] = {"auth_url": urls.auth, "private_url": urls.private, "public_url": urls.public, "workspace": args.workspace}
    if args.device and not args.sso:
        raise ValidationError("--device signs in through a single sign-on connection: give --sso CONNECTION too.", "validation_error", 400)
    if args.sso:
        with Didyma(urls) as anonymous:
            if args.device:
                pair = sso.device_sign_in(anonymous.transport, args.sso, args.workspace, timeout=args.sso_timeout)
            else:
                dashboard = args.dashboard_url or f"{urls.auth.rstrip('/')}/dashboard"
                pair = sso.sign_in(anonymous.transport, dashboard, args.sso, args.workspace, open_browser=not args.no_browser, timeout=args.sso_timeout)
        credentials: Any = TokenPair(pair["access"], pair["refresh"], workspace=args.workspace)
        saved.update(kind="sso", connection=args.sso)
    elif args.api_token:
        credentials = ApiToken(args.api_token)
        saved.update(kind="api_token", api_token=args.api_token)
    elif args.client_id:
        secret = args.client_secret or os.environ.get("DIDYMA_CLIENT_SECRET")
        if not secret or not args.workspace:
            raise ValidationError("--client-id needs --client-secret (or DIDYMA_CLIENT_SECRET) and --workspace.", "validation_error", 400)
        credentials = ClientCredentials(args.client_id, secret, args.workspace)
        saved.update(kind="client_credentials", client_id=args.client_id, client_secret=secret)
    else:
        if not args.email:
            raise ValidationError("Give --email (with --password, DIDYMA_PASSWORD or a prompt), --api-token or --client-id.", "validation_error", 400)
        password = password_of(args)
        credentials = TokenPair(email=args.email, password=password, workspace=args.workspace)
        saved.update(kind="password", email=args.email)
    with Didyma(urls, credentials) as client:
        claims = client.auth.verify()
    if isinstance(credentials, TokenPair):
        # No password is ever saved: the refresh token renews the login until it expires (or, after --sso, until the provider says no).
        saved.update(access=credentials.access, refresh=credentials.refresh)
    store.save(saved)
    return claims


def password_of(args: argparse.Namespace) -> str:
    """--password, else the first line of standard input (--password-stdin), else DIDYMA_PASSWORD, else a prompt
    on the terminal; with no terminal to prompt on, a usage error rather than getpass's end-of-file traceback."""
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            raise ValidationError("--password-stdin read no password: standard input was empty.", "validation_error")
        return password
    password = args.password or os.environ.get("DIDYMA_PASSWORD")
    if password:
        return password
    if not sys.stdin.isatty():
        raise ValidationError("No password and no terminal to ask for one: set DIDYMA_PASSWORD, or pipe it in with --password-stdin.", "validation_error")
    return getpass.getpass("Password: ")


def cmd_logout(_args: argparse.Namespace, _client: Any) -> Any:
    return {"logged_out": store.forget()}


def show_login(claims: Any, args: argparse.Namespace, out: TextIO) -> None:
    """The new login in words, with where it is kept."""
    show_claims(claims, args, out)
    print(f"{'saved in':<10}  {store.store_path()}", file=out)


def show_claims(claims: Any, _args: argparse.Namespace, out: TextIO) -> None:
    """Who the login is, in which workspace with which roles, and until when, in local time."""
    for name, text in claim_lines(plain(claims), store.load(), time.time()):
        print(f"{name:<10}  {text}", file=out)


def claim_lines(claims: dict[str, Any], saved: dict[str, Any], now: float) -> list[tuple[str, str]]:
    kind = "api_token" if os.environ.get("DIDYMA_TOKEN") else saved.get("kind")
    who = {
        "password": saved.get("email"),
        "sso": f"signed in through {saved.get('connection')}",
        "api_token": "an API token's user",
        "client_credentials": f"OAuth application {saved.get('client_id')}",
    }.get(str(kind))
    renewal = {"password": ", then renewed by the saved login", "sso": ", then renewed while the identity provider allows", "client_credentials": ", then asked for again"}.get(
        str(kind), ""
    )
    return [
        ("user", f"{who} (id {claims['user_id']})" if who else f"id {claims['user_id']}"),
        ("workspace", claims.get("workspace") or "none: this login only lists your workspaces (log in again with --workspace)"),
        ("roles", ", ".join(claims.get("permissions") or [])),
        ("valid", f"until {moment(claims['exp'], now)}{renewal}"),
        ("issued", moment(claims["iat"], now)),
    ]


def moment(epoch: float, now: float) -> str:
    """A time in the local zone, with how far it is from now."""
    local = datetime.fromtimestamp(epoch, tz=timezone.utc).astimezone()
    return f"{local:%Y-%m-%d %H:%M:%S %Z} ({relative(epoch - now)})"


def relative(seconds: float) -> str:
    span = abs(seconds)
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if span >= size:
            count = round(span / size)
            text = f"{count} {unit}{'' if count == 1 else 's'}"
            return f"in {text}" if seconds > 0 else f"{text} ago"
    return "in under a minute" if seconds > 0 else "just now"
