"""`didyma`: the command line of the Python package (a client of a running platform).

Exit codes: 0 done; 1 any other API error; 2 bad usage; 3 not logged in or refused credentials (401);
4 permission denied (403); 5 not found (404); 6 conflict (409); 7 invalid input (400, 413, 415);
8 the invocation ended in ERROR; 9 `--wait` timed out; 10 the platform or a backend is unavailable
(5xx, connection failed).
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx

from . import __version__
from . import _cli_store as store
from ._cli_output import emit, plain
from .auth import ApiToken, ClientCredentials, TokenPair
from .client import Didyma
from .errors import (
    BackendError,
    Conflict,
    DidymaError,
    InvocationFailed,
    NotAuthenticated,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    ServiceUnavailable,
    UnsupportedMediaType,
    ValidationError,
    WaitTimeout,
)

EXIT_CODES: list[tuple[type[DidymaError], int]] = [
    (NotAuthenticated, 3),
    (PermissionDenied, 4),
    (NotFound, 5),
    (Conflict, 6),
    (ValidationError, 7),
    (PayloadTooLarge, 7),
    (UnsupportedMediaType, 7),
    (InvocationFailed, 8),
    (WaitTimeout, 9),
    (BackendError, 10),
    (ServiceUnavailable, 10),
]

SESSION_COLUMNS = ["id", "state", "model_key", "created_at"]
INVOCATION_COLUMNS = ["id", "order", "type", "status", "related_to", "response", "error"]
DATASET_COLUMNS = ["id", "name", "version", "row_count", "size", "storage_key", "created_at"]


def exit_code(error: DidymaError) -> int:
    for cls, code in EXIT_CODES:
        if isinstance(error, cls):
            return code
    return 10 if error.status is not None and error.status >= 500 else 1


def read_body(value: str) -> str:
    """A body given inline, as `@file`, or `-` for standard input."""
    if value == "-":
        return sys.stdin.read()
    if value.startswith("@"):
        return Path(value[1:]).read_text()
    return value


def read_json(value: str) -> Any:
    try:
        return json.loads(read_body(value))
    except ValueError as error:
        raise ValidationError(f"Not valid JSON: {error}", "validation_error", 400) from error


def fields_of(data: Any, required: tuple[str, ...]) -> dict[str, Any]:
    """The JSON object's fields when they are exactly `required`; else a ValidationError naming the difference."""
    if not isinstance(data, dict):
        raise ValidationError("Expected a JSON object.", "validation_error", 400)
    missing, unknown = [k for k in required if k not in data], sorted(set(data) - set(required))
    if missing or unknown:
        raise ValidationError(f"Expected the fields {', '.join(required)}; missing: {', '.join(missing) or 'none'}; unknown: {', '.join(unknown) or 'none'}.", "validation_error", 400)
    return data


DEPLOYMENT_FIELDS = ("deployment_key", "registry_connector_class", "registry_connector_init", "server_proxy_class", "server_proxy_init")
STORAGE_FIELDS = ("storage_key", "storage_class", "connector_init")


# ---- the client a command uses


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
    if kind == "password":

        def keep(pair: TokenPair) -> None:
            store.save({**store.load(), "access": pair.access, "refresh": pair.refresh})

        return Didyma(urls, TokenPair(state.get("access"), state.get("refresh"), workspace=state.get("workspace"), on_refresh=keep))
    raise NotAuthenticated("Not logged in: run `didyma login` (or set DIDYMA_TOKEN to an API token).", "not_authenticated", 401)


def cmd_login(args: argparse.Namespace, _client: Any) -> Any:
    urls = Didyma.urls_from(args.auth_url, args.private_url, args.public_url)
    saved: dict[str, Any] = {"auth_url": urls.auth, "private_url": urls.private, "public_url": urls.public, "workspace": args.workspace}
    if args.api_token:
        credentials: Any = ApiToken(args.api_token)
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
        password = args.password or os.environ.get("DIDYMA_PASSWORD") or getpass.getpass("Password: ")
        credentials = TokenPair(email=args.email, password=password, workspace=args.workspace)
        saved.update(kind="password", email=args.email)
    client = Didyma(urls, credentials)
    claims = client.auth.verify()
    if isinstance(credentials, TokenPair):
        # The password itself is never saved: the refresh token renews the login until it expires.
        saved.update(access=credentials.access, refresh=credentials.refresh)
    store.save(saved)
    return claims


def cmd_logout(_args: argparse.Namespace, _client: Any) -> Any:
    return {"logged_out": store.forget()}


def upload(args: argparse.Namespace, c: Didyma) -> Any:
    return c.files.upload(args.storage_key, args.path, content_type=args.content_type, server="private" if args.private else "public")


def invoke(args: argparse.Namespace, c: Didyma) -> Any:
    pending = c.invoke(args.model_code, args.version, args.session_id, read_body(args.body), with_explanation=args.explain, request_type=args.request_type)
    if not args.wait:
        return pending.created
    return pending.wait(timeout=args.timeout)


def export_filter(args: argparse.Namespace, c: Didyma) -> Any:
    return c.datasets.export(
        args.name,
        args.storage_key,
        model_code=args.model_code,
        model_version=args.model_version,
        created_after=args.after,
        created_before=args.before,
        with_feedback=True if args.with_feedback else None,
    )


def download_dataset(args: argparse.Namespace, c: Didyma) -> Any:
    dataset = c.datasets.get(args.dataset_id)
    target = Path(args.output or f"{dataset.name}-v{dataset.version}.jsonl")
    dataset.download(target)
    return {"dataset": dataset.id, "file": str(target), "rows": dataset.row_count, "sha256": dataset.sha256}


def metric_query(args: argparse.Namespace, c: Didyma) -> Any:
    if any("=" not in p for p in args.param):
        raise ValidationError("Metric parameters are label=value pairs.", "validation_error", 400)
    params = dict(p.split("=", 1) for p in args.param)
    return c.metrics.query(args.name, start=args.start, end=args.end, step=args.step, **params)


# ---- the parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="didyma", description="Client of a running didyma platform (models, sessions, invocations, datasets).")
    parser.add_argument("--version", action="version", version=f"didyma (Python client) {__version__}")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--auth-url", help="auth server (default: the saved login, DIDYMA_AUTH_URL, http://127.0.0.1:8080)")
    parser.add_argument("--private-url", help="private server (default: …, DIDYMA_PRIVATE_URL, http://127.0.0.1:8081)")
    parser.add_argument("--public-url", help="public server (default: …, DIDYMA_PUBLIC_URL, http://127.0.0.1:8082)")
    groups = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(sub: Any, name: str, run: Any, help: str, columns: list[str] | None = None, needs_client: bool = True) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(name, help=help, description=help)
        p.set_defaults(run=run, columns=columns, needs_client=needs_client)
        return p

    def group(name: str, help: str) -> Any:
        return groups.add_parser(name, help=help, description=help).add_subparsers(dest="action", required=True, metavar="ACTION")

    p = command(groups, "login", cmd_login, "log in and save the login for the next commands", needs_client=False)
    p.add_argument("--email")
    p.add_argument("--password", help="else DIDYMA_PASSWORD, else a prompt")
    p.add_argument("--workspace")
    p.add_argument("--api-token", help="an API token (dy_…) made in the dashboard")
    # Generated ids and secrets may start with "-": --client-id=VALUE keeps argparse from reading an option.
    p.add_argument("--client-id", help="an OAuth application's client id (with --client-secret and --workspace)")
    p.add_argument("--client-secret", help="else DIDYMA_CLIENT_SECRET")
    command(groups, "logout", cmd_logout, "forget the saved login", needs_client=False)
    command(groups, "whoami", lambda a, c: c.auth.verify(), "the claims of the current login")

    ws = group("workspaces", "workspaces")
    command(ws, "list", lambda a, c: c.workspaces.list().list(), "workspaces you belong to (staff: all)", ["id", "name", "disabled", "created_at"])
    p = command(ws, "create", lambda a, c: c.workspaces.create(a.name), "create a workspace (staff)")
    p.add_argument("name")

    models = group("models", "models")
    command(models, "list", lambda a, c: [{**plain(m.model_metadata), "is_explainer": m.is_explainer, "has_explainer": m.has_explainer} for m in c.models.list()], "live models of the workspace", ["model_code", "version", "name", "is_explainer", "has_explainer"])
    p = command(models, "get", lambda a, c: c.models.get(a.model_code, a.version), "one model with its explainer chain")
    p.add_argument("model_code")
    p.add_argument("version")
    p = command(models, "register", lambda a, c: c.models.register(read_json(a.payload)), "register a model from a ModelPayload (JSON, @file or -)", ["model_code", "version", "name", "workspace"])
    p.add_argument("payload")
    p = command(models, "delete", lambda a, c: c.models.delete(a.model_code, a.version), "delete a model version (its pair stays reserved)")
    p.add_argument("model_code")
    p.add_argument("version")

    deployments = group("deployments", "deployments")
    columns = ["deployment_key", "registry_connector_class", "server_proxy_class", "workspace"]
    command(deployments, "list", lambda a, c: c.deployments.list().list(), "deployments of the workspace", columns)
    p = command(deployments, "get", lambda a, c: c.deployments.get(a.deployment_key), "one deployment", columns)
    p.add_argument("deployment_key")
    p = command(deployments, "create", lambda a, c: c.deployments.create(**fields_of(read_json(a.payload), DEPLOYMENT_FIELDS)), "create a deployment from a DeploymentPayload (JSON, @file or -)", columns)
    p.add_argument("payload")
    p = command(deployments, "delete", lambda a, c: c.deployments.delete(a.deployment_key), "delete a deployment (its key stays reserved)")
    p.add_argument("deployment_key")

    storage = group("storage", "storage configurations")
    command(storage, "list", lambda a, c: c.storage.list().list(), "storage configurations of the workspace", ["storage_key", "storage_class", "workspace"])
    p = command(storage, "create", lambda a, c: c.storage.create(**fields_of(read_json(a.payload), STORAGE_FIELDS)), "create one from {storage_key, storage_class, connector_init}")
    p.add_argument("payload")
    p = command(storage, "delete", lambda a, c: c.storage.delete(a.storage_key), "de-register one (files stay)")
    p.add_argument("storage_key")
    p = command(groups, "upload", upload, "upload a file into a storage configuration", ["file_id", "file_name", "content_type", "size", "sha256"])
    p.add_argument("storage_key")
    p.add_argument("path")
    p.add_argument("--content-type")
    p.add_argument("--private", action="store_true", help="through the private server (supervisors, e.g. model cards)")

    sessions = group("sessions", "your sessions of a model version")
    p = command(sessions, "list", lambda a, c: c.sessions.list(a.model_code, a.version).list(), "your sessions", SESSION_COLUMNS)
    p.add_argument("model_code")
    p.add_argument("version")
    p = command(sessions, "open", lambda a, c: c.sessions.create(a.model_code, a.version), "open a new session", SESSION_COLUMNS)
    p.add_argument("model_code")
    p.add_argument("version")
    for name, state in (("close", "CLOSED"), ("reopen", "OPEN")):
        p = command(sessions, name, lambda a, c, s=state: c.sessions.set_state(a.model_code, a.version, a.session_id, s), f"set a session {state}", SESSION_COLUMNS)
        p.add_argument("model_code")
        p.add_argument("version")
        p.add_argument("session_id")
    p = command(sessions, "invocations", lambda a, c: c.invocations.list(a.model_code, a.version, a.session_id).list(), "the invocations of a session, in order", INVOCATION_COLUMNS)
    p.add_argument("model_code")
    p.add_argument("version")
    p.add_argument("session_id")

    p = command(groups, "invoke", invoke, "queue a prediction (body: JSON text, @file or -)", INVOCATION_COLUMNS)
    p.add_argument("model_code")
    p.add_argument("version")
    p.add_argument("session_id")
    p.add_argument("body")
    p.add_argument("--explain", action="store_true", help="run the explainer chain after it")
    p.add_argument("--request-type", default="FEATURES", choices=["FEATURES", "PROMPT", "FEEDBACK", "OTHER"])
    p.add_argument("--wait", action="store_true", help="wait until it is COMPLETED (exit 8 on ERROR)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds --wait waits (exit 9 after)")
    p = command(groups, "invocation", lambda a, c: c.invocations.get(a.model_code, a.version, a.session_id, a.invocation_id), "one invocation", INVOCATION_COLUMNS)
    for arg in ("model_code", "version", "session_id", "invocation_id"):
        p.add_argument(arg)

    p = command(groups, "feedback", lambda a, c: c.feedback(a.model_code, a.version, a.session_id, a.invocation_id, read_body(a.body)), "feedback on an invocation (body: text, @file or -)", INVOCATION_COLUMNS)
    for arg in ("model_code", "version", "session_id", "invocation_id", "body"):
        p.add_argument(arg)

    export = group("export", "export closed sessions as a new dataset version")
    p = command(export, "session", lambda a, c: c.export_session(a.model_code, a.version, a.session_id, a.storage_key, a.name), "one CLOSED session", DATASET_COLUMNS)
    for arg in ("model_code", "version", "session_id"):
        p.add_argument(arg)
    p.add_argument("--storage", dest="storage_key", required=True, help="storage configuration to write into")
    p.add_argument("--name")
    p = command(export, "filter", export_filter, "your CLOSED sessions matching a filter", DATASET_COLUMNS)
    p.add_argument("--name", required=True)
    p.add_argument("--storage", dest="storage_key", required=True)
    p.add_argument("--model-code")
    p.add_argument("--model-version")
    p.add_argument("--after", help="records created at or after (ISO 8601)")
    p.add_argument("--before", help="records created before (ISO 8601)")
    p.add_argument("--with-feedback", action="store_true", help="only records that received feedback")

    datasets = group("datasets", "your datasets")
    p = command(datasets, "list", lambda a, c: c.datasets.list(a.name).list(), "your datasets, newest first", DATASET_COLUMNS)
    p.add_argument("--name")
    p = command(datasets, "get", lambda a, c: c.datasets.get(a.dataset_id), "one dataset version")
    p.add_argument("dataset_id")
    p = command(datasets, "manifest", lambda a, c: c.datasets.manifest(a.dataset_id), "its manifest")
    p.add_argument("dataset_id")
    p = command(datasets, "download", download_dataset, "download its JSON Lines (checked against its SHA-256)")
    p.add_argument("dataset_id")
    p.add_argument("-o", "--output", help="file to write (default: NAME-vVERSION.jsonl)")

    metrics = group("metrics", "the metric catalog (supervisors)")
    command(metrics, "list", lambda a, c: c.metrics.list().list(), "metric definitions", ["name", "required_params", "optional_params", "description"])
    p = command(metrics, "query", metric_query, "query one metric")
    p.add_argument("name")
    p.add_argument("param", nargs="*", help="label=value filters")
    p.add_argument("--start")
    p.add_argument("--end")
    p.add_argument("--step")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    client: Didyma | None = None
    try:
        client = client_from_store(args) if args.needs_client else None
        result = args.run(args, client)
        if result is not None:
            emit(result, args.json, args.columns)
        return 0
    except DidymaError as error:
        print(f"didyma: {error}", file=sys.stderr)
        if isinstance(error, InvocationFailed) and args.json:
            emit(error.invocation, True)
        return exit_code(error)
    except httpx.TransportError as error:
        print(f"didyma: cannot reach the platform: {error}", file=sys.stderr)
        return 10
    except OSError as error:
        print(f"didyma: {error}", file=sys.stderr)
        return 1
    finally:
        if client is not None:
            client.close()


if __name__ == "__main__":
    sys.exit(main())
