"""The command line's aliases of model codes: `didyma aliases set iris-classifier production 2`."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from ._cli_output import table, terminal_width
from ._cli_registrar import Registrar, accept_output_options
from .errors import ValidationError
from .models import COMPARISON_COLUMNS, AliasComparison

ALIAS_COLUMNS = ["alias", "model_code", "version", "updated_by", "updated_at"]
MOVE_COLUMNS = ["moved_at", "from_version", "to_version", "moved_by", "request_id"]
ALIAS_SESSION_COLUMNS = ["id", "state", "alias", "model_key", "created_at"]
ALIAS_ARGS = ("model_code", "alias")
POLICY_COLUMNS = ["sticky", "weights", "shadows", "guards", "updated_by", "updated_at"]


def add_aliases(r: Registrar) -> None:
    aliases = r.group("aliases", "aliases of a model code (production, staging, …) and where they point")
    r.command(aliases, "list", lambda a, c: c.aliases.list(a.model_code).list(), "the model code's aliases", ALIAS_COLUMNS, args=["model_code"])
    r.command(aliases, "get", lambda a, c: c.aliases.get(a.model_code, a.alias), "one alias and its version", ALIAS_COLUMNS, args=ALIAS_ARGS)
    r.command(aliases, "set", lambda a, c: c.aliases.set(a.model_code, a.alias, a.version), "point an alias at a version, creating or moving it", ALIAS_COLUMNS, args=[*ALIAS_ARGS, "version"])
    r.command(aliases, "delete", lambda a, c: c.aliases.delete(a.model_code, a.alias), "delete an alias (open sessions keep their version)", args=ALIAS_ARGS)
    r.command(aliases, "history", lambda a, c: c.aliases.history(a.model_code, a.alias).list(), "every move of an alias, newest first", MOVE_COLUMNS, args=ALIAS_ARGS)
    open_on = lambda a, c: c.sessions.create_on_alias(a.model_code, a.alias)
    r.command(aliases, "open-session", open_on, "open a session on the version the alias points at now", ALIAS_SESSION_COLUMNS, args=ALIAS_ARGS)
    compare = lambda a, c: c.aliases.comparison(a.model_code, a.alias, since=a.since, until=a.until, tolerance=a.tolerance)
    help = "compare the versions the alias's sessions ran: outcomes, latency percentiles, feedback, shadows' agreement (--json: all of it)"
    p = r.command(aliases, "compare", compare, help, args=ALIAS_ARGS, show=show_comparison)
    p.add_argument("--since", help="start of the window, RFC 3339 (default: 7 days before --until)")
    p.add_argument("--until", help="end of the window, RFC 3339 (default: now)")
    p.add_argument("--tolerance", type=float, help="absolute difference within which a shadow's numbers agree with its primary's (default: 1e-6)")
    add_policy(r, aliases)


def add_policy(r: Registrar, aliases: Any) -> None:
    """`didyma aliases policy set iris-classifier production 1=90 2=10 --shadow 3`, `… policy get`, `… policy delete`."""
    parser = aliases.add_parser("policy", help="the alias's traffic policy: weighted versions, sticky per session or user", description="the alias's traffic policy")
    accept_output_options(parser)
    policy = parser.add_subparsers(dest="policy_action", required=True, metavar="ACTION")
    r.command(policy, "get", lambda a, c: c.aliases.get_policy(a.model_code, a.alias), "the alias's traffic policy", POLICY_COLUMNS, args=ALIAS_ARGS)
    p = r.command(policy, "set", set_policy, "set the traffic policy: VERSION=WEIGHT pairs summing to 100, the alias's version among them", POLICY_COLUMNS, args=ALIAS_ARGS)
    p.add_argument("weights", nargs="+", metavar="VERSION=WEIGHT", help="a weighted version, e.g. 1=90 2=10")
    p.add_argument("--sticky", choices=["session", "user"], default="session", help="keep each session (default) or each user on one version")
    p.add_argument("--shadow", action="append", default=[], metavar="VERSION", help="a shadow version (repeat): gets a copy of each prediction, never returned")
    p.add_argument("--guards", type=guards_of, metavar="JSON", help='guards of the candidates, e.g. \'{"min_invocations": 200, "max_error_rate": 0.05}\'')
    r.command(policy, "delete", lambda a, c: c.aliases.delete_policy(a.model_code, a.alias), "delete the traffic policy: new sessions run the alias's version", args=ALIAS_ARGS)


def set_policy(args: argparse.Namespace, c: Any) -> Any:
    return c.aliases.set_policy(args.model_code, args.alias, weights_of(args.weights), sticky=args.sticky, shadows=args.shadow, guards=args.guards)


def guards_of(text: str) -> dict[str, Any]:
    """`--guards` as a JSON object; anything else is an argparse error naming it."""
    try:
        guards = json.loads(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not JSON: {error}") from error
    if not isinstance(guards, dict):
        raise argparse.ArgumentTypeError("a JSON object, e.g. {\"max_error_rate\": 0.05}")
    return guards


def weights_of(pairs: list[str]) -> dict[str, int]:
    """`["1=90", "2=10"]` → `{"1": 90, "2": 10}`; a pair that is not VERSION=INTEGER is a ValidationError."""
    weights: dict[str, int] = {}
    for pair in pairs:
        version, _, weight = pair.rpartition("=")
        if not version or not weight.lstrip("-").isdigit():
            raise ValidationError(f"{pair}: expected VERSION=WEIGHT, e.g. 1=90.", "validation_error", 400)
        weights[version] = int(weight)
    return weights



def show_comparison(comparison: AliasComparison, args: argparse.Namespace, out: TextIO) -> None:
    """A line naming the window, then one row per metric and version, then a line per shadow compared only in part."""
    print(f"{comparison.model_code} {comparison.alias}: {comparison.since} to {comparison.until}", file=out)
    table(comparison.rows(), COMPARISON_COLUMNS, out, terminal_width(), getattr(args, "wide", False))
    for v in comparison.versions:
        if v.agreement and v.agreement["truncated"]:
            print(f"agreement of {v.version}: the first {v.agreement['compared']} pairs of the window only; narrow it for the rest", file=out)
