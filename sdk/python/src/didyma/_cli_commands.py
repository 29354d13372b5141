"""The command line's commands: one function per area adds its sub-commands to the parser."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from . import __version__
from ._cli_aliases import add_aliases
from ._cli_input import fields_of, read_body, read_json
from ._cli_login import cmd_login, cmd_logout, show_claims, show_login
from ._cli_output import plain
from ._cli_registrar import Registrar
from ._cli_results import show_invocation_table, show_invocations
from ._cli_webhooks import add_webhooks
from .client import Didyma
from .errors import NotFound, ValidationError, WaitTimeout
from .models import AuditRecord, Invocation
from .sessions import PendingInvocation

SESSION_COLUMNS = ["id", "state", "model_key", "created_at"]
INVOCATION_COLUMNS = ["id", "order", "type", "status", "related_to", "response", "error"]
DATASET_COLUMNS = ["id", "name", "version", "row_count", "size", "storage_key", "created_at"]
DEPLOYMENT_COLUMNS = ["deployment_key", "registry_connector_class", "server_proxy_class", "max_concurrent_calls", "workspace"]
DEPLOYMENT_FIELDS = ("deployment_key", "registry_connector_class", "registry_connector_init", "server_proxy_class", "server_proxy_init")
DEPLOYMENT_OPTIONAL = ("max_concurrent_calls",)
OFFER_COLUMNS = ["model_code", "version", "registered_versions", "component", "ready", "namespace", "protocol", "host"]
QUOTA_COLUMNS = ["workspace_id", "share_weight", "max_in_flight", "max_queued"]
STORAGE_FIELDS = ("storage_key", "storage_class", "connector_init")
SESSION_ARGS = ("model_code", "version", "session_id")
AUDIT_COLUMNS = ["created_at", "actor", "workspace_id", "action", "resource", "outcome", "request_id"]


def add_login(r: Registrar) -> None:
    p = r.command(r.groups, "login", cmd_login, "log in and save the login for the next commands", needs_client=False, show=show_login)
    p.add_argument("--email")
    p.add_argument("--password", help="else DIDYMA_PASSWORD, else a prompt on the terminal")
    p.add_argument("--password-stdin", action="store_true", help="read the password from the first line of standard input")
    p.add_argument("--workspace")
    p.add_argument("--api-token", help="an API token (dy_…) made in the dashboard")
    # Generated ids and secrets may start with "-": --client-id=VALUE keeps argparse from reading an option.
    p.add_argument("--client-id", help="an OAuth application's client id (with --client-secret and --workspace)")
    p.add_argument("--client-secret", help="else DIDYMA_CLIENT_SECRET")
    p.add_argument("--sso", metavar="CONNECTION", help="sign in in the browser through this single sign-on connection (its id)")
    p.add_argument("--dashboard-url", help="the dashboard --sso starts at (default: the auth server's /dashboard)")
    p.add_argument("--no-browser", action="store_true", help="with --sso: print the sign-in URL only, for a browser elsewhere on this machine")
    p.add_argument("--device", action="store_true", help="with --sso: sign in on another device with a code (device flow), for a machine without a browser")
    p.add_argument("--sso-timeout", type=float, default=300.0, help="with --sso: seconds to wait for the browser, or with --device for the sign-in (default 300)")
    r.command(r.groups, "logout", cmd_logout, "forget the saved login", needs_client=False)
    r.command(r.groups, "whoami", lambda a, c: c.auth.verify(), "who the current login is, where, and until when (--json: its claims)", show=show_claims)
    ws = r.group("workspaces", "workspaces")
    r.command(ws, "list", lambda a, c: c.workspaces.list().list(), "workspaces you belong to (staff: all)", ["id", "name", "disabled", "created_at"])
    r.command(ws, "create", lambda a, c: c.workspaces.create(a.name), "create a workspace (staff)", args=["name"])
    p = r.command(ws, "quota", lambda a, c: c.workspaces.quota(a.workspace_id), "a workspace's weight and limits (staff, or its supervisor)", QUOTA_COLUMNS)
    p.add_argument("workspace_id", type=int)
    p = r.command(ws, "set-quota", set_quota, "change a workspace's weight and limits (staff); only the options given change", QUOTA_COLUMNS)
    p.add_argument("workspace_id", type=int)
    p.add_argument("--weight", type=int, default=UNSET, help="share of the executors against other busy workspaces, 1 to 1000 (default 1)")
    p.add_argument("--max-in-flight", type=limit, default=UNSET, help="model calls at once, or none for no limit")
    p.add_argument("--max-queued", type=limit, default=UNSET, help="invocations queued at once (more get 429), or none for no limit")


# argparse's default for an option not given; None is "no limit".
UNSET: Any = object()


def limit(value: str) -> int | None:
    """A limit on the command line: a whole number, or "none" for no limit."""
    if value.lower() == "none":
        return None
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is neither a whole number nor none") from None


def set_quota(args: argparse.Namespace, c: Didyma) -> Any:
    given = {"share_weight": args.weight, "max_in_flight": args.max_in_flight, "max_queued": args.max_queued}
    changes = {name: value for name, value in given.items() if value is not UNSET}
    if not changes:
        raise ValidationError("Give at least one of --weight, --max-in-flight, --max-queued.", "validation_error", 400)
    return c.workspaces.set_quota(args.workspace_id, **changes)


def list_models(_args: argparse.Namespace, c: Didyma) -> Any:
    return [{**plain(m.model_metadata), "is_explainer": m.is_explainer, "has_explainer": m.has_explainer} for m in c.models.list()]


def upload(args: argparse.Namespace, c: Didyma) -> Any:
    return c.files.upload(args.storage_key, args.path, content_type=args.content_type, server="private" if args.private else "public")


def metric_query(args: argparse.Namespace, c: Didyma) -> Any:
    if any("=" not in p for p in args.param):
        raise ValidationError("Metric parameters are label=value pairs.", "validation_error", 400)
    params = dict(p.split("=", 1) for p in args.param)
    return c.metrics.query(args.name, start=args.start, end=args.end, step=args.step, **params)


def list_offered(args: argparse.Namespace, c: Didyma) -> Any:
    return [{**o.registry, "model_code": o.model_code, "version": o.version, "registered_versions": ", ".join(o.registered_versions)} for o in c.deployments.offered(args.deployment_key)]


def register_offered(args: argparse.Namespace, c: Didyma) -> Any:
    offer = next((o for o in c.deployments.offered(args.deployment_key) if o.model_code == args.model_code), None)
    if offer is None:
        raise NotFound(f"Deployment {args.deployment_key} offers no model {args.model_code}.", "not_found", 404)
    try:
        return c.models.register_offered(offer, args.card, version=args.version, name=args.name, description=args.description)
    except ValueError as error:
        raise ValidationError(f"{error}.", "validation_error", 400) from None


def add_registry(r: Registrar) -> None:
    models = r.group("models", "models")
    r.command(models, "list", list_models, "live models of the workspace", ["model_code", "version", "name", "is_explainer", "has_explainer"])
    r.command(models, "get", lambda a, c: c.models.get(a.model_code, a.version), "one model with its explainer chain", args=["model_code", "version"])
    r.command(models, "register", lambda a, c: c.models.register(read_json(a.payload)), "register a model from a ModelPayload (JSON, @file or -)", ["model_code", "version", "name", "workspace"], args=["payload"])
    r.command(models, "delete", lambda a, c: c.models.delete(a.model_code, a.version), "delete a model version (its pair stays reserved)", args=["model_code", "version"])
    p = r.command(models, "register-offered", register_offered, "register a model a deployment offers (see: deployments offered)", ["model_code", "version", "name", "workspace"], args=["deployment_key", "model_code"])
    p.add_argument("--card", required=True, metavar="FILE_ID", help="the model card's file id (upload it first)")
    p.add_argument("--version", help="the version to register, when the offer takes any")
    p.add_argument("--name", help="default: the model code")
    p.add_argument("--description")

    deployments = r.group("deployments", "deployments")
    r.command(deployments, "list", lambda a, c: c.deployments.list().list(), "deployments of the workspace", DEPLOYMENT_COLUMNS)
    r.command(deployments, "get", lambda a, c: c.deployments.get(a.deployment_key), "one deployment", DEPLOYMENT_COLUMNS, args=["deployment_key"])
    create = lambda a, c: c.deployments.create(**fields_of(read_json(a.payload), DEPLOYMENT_FIELDS, DEPLOYMENT_OPTIONAL))
    r.command(deployments, "create", create, "create a deployment from a DeploymentPayload (JSON, @file or -)", DEPLOYMENT_COLUMNS, args=["payload"])
    set_limit = lambda a, c: c.deployments.set_max_concurrent_calls(a.deployment_key, a.max_concurrent_calls)
    p = r.command(deployments, "set-limit", set_limit, "change how many calls its model server gets at once", DEPLOYMENT_COLUMNS, args=["deployment_key"])
    p.add_argument("max_concurrent_calls", type=limit, help="a whole number, or none for no limit")
    r.command(deployments, "delete", lambda a, c: c.deployments.delete(a.deployment_key), "delete a deployment (its key stays reserved)", args=["deployment_key"])
    offered = "what its registry offers for registration (KServe: InferenceServices and their explainers)"
    r.command(deployments, "offered", list_offered, offered, OFFER_COLUMNS, args=["deployment_key"])

    storage = r.group("storage", "storage configurations")
    r.command(storage, "list", lambda a, c: c.storage.list().list(), "storage configurations of the workspace", ["storage_key", "storage_class", "workspace"])
    create = lambda a, c: c.storage.create(**fields_of(read_json(a.payload), STORAGE_FIELDS))
    r.command(storage, "create", create, "create one from {storage_key, storage_class, connector_init}", args=["payload"])
    r.command(storage, "delete", lambda a, c: c.storage.delete(a.storage_key), "de-register one (files stay)", args=["storage_key"])
    p = r.command(r.groups, "upload", upload, "upload a file into a storage configuration", ["file_id", "file_name", "content_type", "size", "sha256"], args=["storage_key", "path"])
    p.add_argument("--content-type")
    p.add_argument("--private", action="store_true", help="through the private server (supervisors, e.g. model cards)")

    metrics = r.group("metrics", "the metric catalog (supervisors)")
    r.command(metrics, "list", lambda a, c: c.metrics.list().list(), "metric definitions", ["name", "required_params", "optional_params", "description"])
    p = r.command(metrics, "query", metric_query, "query one metric", args=["name"])
    p.add_argument("param", nargs="*", help="label=value filters")
    for option in ("--start", "--end", "--step"):
        p.add_argument(option)


def invoke(args: argparse.Namespace, c: Didyma) -> Any:
    deadline = time.monotonic() + args.timeout
    body = read_body(args.body)
    pending = c.invoke(
        args.model_code,
        args.version,
        args.session_id,
        body,
        with_explanation=args.explain,
        request_type=args.request_type,
        priority=args.priority,
        idempotency_key=args.idempotency_key,
        callback_url=args.callback_url,
        # One call when the server answers within its wait; the rest of --timeout is waited on as before.
        wait=args.timeout if args.wait else None,
    )
    if not args.wait:
        return pending.created
    done = pending.wait(timeout=max(0.0, deadline - time.monotonic()))
    if not args.explain:
        return done
    return {**plain(done), "explanations": [plain(e) for e in explanations_of(c, pending, done, deadline)]}


def explanations_of(c: Didyma, pending: PendingInvocation, done: Invocation, deadline: float) -> list[Invocation]:
    """The explanation chain that followed a prediction, each waited on until it finished: an invocation's
    explanation is queued as it completes, so the chain ends where none follows a finished one."""
    chain: list[Invocation] = []
    current = done
    while current.status == "COMPLETED":
        explanations = c.invocations.list(pending.model_code, pending.version, pending.session_id, type="EXPLAIN")
        following = next((e for e in explanations if e.related_to == current.id), None)
        if following is None:
            break
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WaitTimeout(f"Explanation {following.id} is still {following.status} after the --timeout.", following)
        current = PendingInvocation(c.invocations, pending.model_code, pending.version, following).wait(timeout=remaining, raise_on_error=False)
        chain.append(current)
    return chain


def add_sessions(r: Registrar) -> None:
    sessions = r.group("sessions", "your sessions of a model version")
    r.command(sessions, "list", lambda a, c: c.sessions.list(a.model_code, a.version).list(), "your sessions", SESSION_COLUMNS, args=["model_code", "version"])
    r.command(sessions, "open", lambda a, c: c.sessions.create(a.model_code, a.version), "open a new session", SESSION_COLUMNS, args=["model_code", "version"])
    r.command(sessions, "close", lambda a, c: c.sessions.close(a.model_code, a.version, a.session_id), "close a session", SESSION_COLUMNS, args=SESSION_ARGS)
    r.command(sessions, "reopen", lambda a, c: c.sessions.reopen(a.model_code, a.version, a.session_id), "reopen a session", SESSION_COLUMNS, args=SESSION_ARGS)
    list_invocations = lambda a, c: c.invocations.list(a.model_code, a.version, a.session_id).list()
    r.command(sessions, "invocations", list_invocations, "the invocations of a session, newest first", INVOCATION_COLUMNS, args=SESSION_ARGS, show=show_invocation_table)
    p = r.command(sessions, "events", follow_events, "print the status changes of the session's invocations as they happen", args=SESSION_ARGS)
    p.add_argument("--last-event-id", help="go on after this id (--json prints each event's resume_from)")
    p.add_argument("--max", type=int, default=0, metavar="N", help="stop after N events (default: follow until interrupted)")
    cancel_session = lambda a, c: {"cancelled": c.sessions.cancel(a.model_code, a.version, a.session_id, a.status)}
    p = r.command(sessions, "cancel", cancel_session, "cancel the session's invocations not yet finished", args=SESSION_ARGS)
    p.add_argument("--status", choices=["QUEUED", "IN_PROGRESS"], help="only those with this status")

    help = "queue a prediction (body: JSON text, @file or -); with --wait, show its output (and --explain: its explanations)"
    p = r.command(r.groups, "invoke", invoke, help, INVOCATION_COLUMNS, args=[*SESSION_ARGS, "body"], show=show_invocations)
    p.add_argument("--explain", action="store_true", help="run the explainer chain after it (with --wait: wait for it too)")
    p.add_argument("--request-type", default="FEATURES", choices=["FEATURES", "PROMPT", "FEEDBACK", "OTHER"])
    p.add_argument("--priority", type=int, choices=range(10), metavar="0-9", help="higher runs first within the workspace (default 5)")
    p.add_argument("--idempotency-key", help="send again with the same key to get the same invocation, not a second one (default: a new key)")
    p.add_argument("--callback-url", help="POST its outcome there (a webhook endpoint of the workspace must allow the URL)")
    p.add_argument("--wait", action="store_true", help="answer once it is COMPLETED, in one call when the server allows the wait (exit 8 on ERROR)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds --wait waits (exit 9 after)")
    get = lambda a, c: c.invocations.get(a.model_code, a.version, a.session_id, a.invocation_id)
    r.command(r.groups, "invocation", get, "one invocation, its output in full", INVOCATION_COLUMNS, args=[*SESSION_ARGS, "invocation_id"], show=show_invocations)
    cancel = lambda a, c: c.invocations.cancel(a.model_code, a.version, a.session_id, a.invocation_id)
    r.command(r.groups, "cancel", cancel, "cancel an invocation not yet finished", INVOCATION_COLUMNS, args=[*SESSION_ARGS, "invocation_id"], show=show_invocations)
    retry = lambda a, c: c.invocations.retry(a.model_code, a.version, a.session_id, a.invocation_id)
    r.command(r.groups, "retry", retry, "run again an invocation that ended in ERROR or CANCELLED", INVOCATION_COLUMNS, args=[*SESSION_ARGS, "invocation_id"], show=show_invocations)
    feedback = lambda a, c: c.feedback(a.model_code, a.version, a.session_id, a.invocation_id, read_body(a.body))
    r.command(r.groups, "feedback", feedback, "feedback on an invocation (body: text, @file or -)", INVOCATION_COLUMNS, args=[*SESSION_ARGS, "invocation_id", "body"], show=show_invocations)


def follow_events(args: argparse.Namespace, c: Didyma) -> None:
    """One line per event as it comes (JSON Lines with --json), until --max events or an interrupt."""
    events = c.sessions.events(args.model_code, args.version, args.session_id, args.last_event_id)
    for count, event in enumerate(events, start=1):
        line = json.dumps(plain(event)) if args.json else f"{event.created_at}  {event.invocation_id}  {event.status}"
        print(line, flush=True)
        if args.max and count >= args.max:
            return


def export_filter(args: argparse.Namespace, c: Didyma) -> Any:
    filters = {"model_code": args.model_code, "model_version": args.model_version, "created_after": args.after, "created_before": args.before}
    return c.datasets.export(args.name, args.storage_key, with_feedback=True if args.with_feedback else None, format=args.format, **filters)


def download_dataset(args: argparse.Namespace, c: Didyma) -> Any:
    dataset = c.datasets.get(args.dataset_id)
    if args.table:
        table = dataset.require_table()
        target = Path(args.output or f"{dataset.name}-v{dataset.version}.table.{table['format']}")
        dataset.download(target, table=True)
        return {"dataset": dataset.id, "file": str(target), "rows": dataset.row_count, "format": table["format"], "sha256": table["sha256"]}
    target = Path(args.output or f"{dataset.name}-v{dataset.version}.jsonl")
    dataset.download(target)
    return {"dataset": dataset.id, "file": str(target), "rows": dataset.row_count, "sha256": dataset.sha256}


def add_format(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=["jsonl", "parquet"], help="file format of the typed table written beside the JSON Lines records (default: jsonl)")


def add_session_export(r: Registrar, group: Any, name: str) -> None:
    """The export of one CLOSED session, as `export session` and as `datasets export`."""
    one = lambda a, c: c.export_session(a.model_code, a.version, a.session_id, a.storage_key, a.name, format=a.format)
    p = r.command(group, name, one, "one CLOSED session as a new dataset version", DATASET_COLUMNS, args=SESSION_ARGS)
    p.add_argument("--storage", dest="storage_key", required=True, help="storage configuration to write into")
    p.add_argument("--name")
    add_format(p)


def add_datasets(r: Registrar) -> None:
    export = r.group("export", "export closed sessions as a new dataset version")
    add_session_export(r, export, "session")
    p = r.command(export, "filter", export_filter, "your CLOSED sessions matching a filter", DATASET_COLUMNS)
    add_format(p)
    p.add_argument("--name", required=True)
    p.add_argument("--storage", dest="storage_key", required=True)
    p.add_argument("--model-code")
    p.add_argument("--model-version")
    p.add_argument("--after", help="records created at or after (ISO 8601)")
    p.add_argument("--before", help="records created before (ISO 8601)")
    p.add_argument("--with-feedback", action="store_true", help="only records that received feedback")

    datasets = r.group("datasets", "your datasets")
    add_session_export(r, datasets, "export")
    p = r.command(datasets, "list", lambda a, c: c.datasets.list(a.name).list(), "your datasets, newest first", DATASET_COLUMNS)
    p.add_argument("--name")
    r.command(datasets, "get", lambda a, c: c.datasets.get(a.dataset_id), "one dataset version", args=["dataset_id"])
    r.command(datasets, "manifest", lambda a, c: c.datasets.manifest(a.dataset_id), "its manifest", args=["dataset_id"])
    p = r.command(datasets, "download", download_dataset, "download its JSON Lines records, or its table (checked against its SHA-256)", args=["dataset_id"])
    p.add_argument("--table", action="store_true", help="the typed table (JSON Lines or Parquet, as exported) instead of the records")
    p.add_argument("-o", "--output", help="file to write (default: NAME-vVERSION.jsonl, or NAME-vVERSION.table.FORMAT)")


def list_audit(args: argparse.Namespace, c: Didyma) -> Any:
    page = c.audit.list(
        actor=args.actor,
        action=args.action,
        resource_type=args.resource_type,
        resource_id=args.resource_id,
        workspace_id=args.workspace_id,
        created_after=args.since,
        created_before=args.until,
        page_size=min(args.limit, 1000),
    )
    return [audit_row(record) for record, _ in zip(page, range(args.limit))]


def audit_row(record: AuditRecord) -> dict[str, Any]:
    """A record as a table row: actor and resource as short text."""
    row: dict[str, Any] = dict(plain(record))
    actor = record.actor
    row["actor"] = "anonymous" if actor["type"] == "anonymous" else f"{actor['type']} {actor['id'] or ''} (user {actor['user_id']})".replace("  ", " ")
    resource = record.resource
    row["resource"] = f"{resource['type']} {resource['id']}" if resource["type"] else record.path
    return row


def add_audit(r: Registrar) -> None:
    audit = r.group("audit", "the audit trail (supervisors: their workspace; staff: all)")
    p = r.command(audit, "list", list_audit, "records newest first, filtered", AUDIT_COLUMNS)
    p.add_argument("--actor", type=int, help="a user id")
    p.add_argument("--action", help="an operationId, such as createDeployment")
    p.add_argument("--resource-type")
    p.add_argument("--resource-id")
    p.add_argument("--workspace-id", type=int, help="staff: one workspace")
    p.add_argument("--since", help="RFC 3339 instant")
    p.add_argument("--until", help="RFC 3339 instant")
    p.add_argument("--limit", type=int, default=100, help="records to print at most (default 100)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="didyma", description="Client of a running didyma platform (models, sessions, invocations, datasets).")
    parser.add_argument("--version", action="version", version=f"didyma (Python client) {__version__}")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables (also accepted after the command)")
    parser.add_argument("--wide", action="store_true", help="print tables without cutting any cell (also accepted after the command)")
    parser.add_argument("--auth-url", help="auth server (default: the saved login, DIDYMA_AUTH_URL, http://127.0.0.1:8080)")
    parser.add_argument("--private-url", help="private server (default: …, DIDYMA_PRIVATE_URL, http://127.0.0.1:8081)")
    parser.add_argument("--public-url", help="public server (default: …, DIDYMA_PUBLIC_URL, http://127.0.0.1:8082)")
    registrar = Registrar(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    for add in (add_login, add_registry, add_aliases, add_sessions, add_datasets, add_webhooks, add_audit):
        add(registrar)
    return parser
