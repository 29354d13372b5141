"""The command line's aliases of model codes: `didyma aliases set iris-classifier production 2`."""

from __future__ import annotations

import argparse
from typing import TextIO

from ._cli_output import table, terminal_width
from ._cli_registrar import Registrar
from .models import COMPARISON_COLUMNS, AliasComparison

ALIAS_COLUMNS = ["alias", "model_code", "version", "updated_by", "updated_at"]
MOVE_COLUMNS = ["moved_at", "from_version", "to_version", "moved_by", "request_id"]
ALIAS_SESSION_COLUMNS = ["id", "state", "alias", "model_key", "created_at"]
ALIAS_ARGS = ("model_code", "alias")


def add_aliases(r: Registrar) -> None:
    aliases = r.group("aliases", "aliases of a model code (production, staging, …) and where they point")
    r.command(aliases, "list", lambda a, c: c.aliases.list(a.model_code).list(), "the model code's aliases", ALIAS_COLUMNS, args=["model_code"])
    r.command(aliases, "get", lambda a, c: c.aliases.get(a.model_code, a.alias), "one alias and its version", ALIAS_COLUMNS, args=ALIAS_ARGS)
    r.command(aliases, "set", lambda a, c: c.aliases.set(a.model_code, a.alias, a.version), "point an alias at a version, creating or moving it", ALIAS_COLUMNS, args=[*ALIAS_ARGS, "version"])
    r.command(aliases, "delete", lambda a, c: c.aliases.delete(a.model_code, a.alias), "delete an alias (open sessions keep their version)", args=ALIAS_ARGS)
    r.command(aliases, "history", lambda a, c: c.aliases.history(a.model_code, a.alias).list(), "every move of an alias, newest first", MOVE_COLUMNS, args=ALIAS_ARGS)
    open_on = lambda a, c: c.sessions.create_on_alias(a.model_code, a.alias)
    r.command(aliases, "open-session", open_on, "open a session on the version the alias points at now", ALIAS_SESSION_COLUMNS, args=ALIAS_ARGS)
    compare = lambda a, c: c.aliases.comparison(a.model_code, a.alias, since=a.since, until=a.until)
    help = "compare the versions the alias's sessions ran: outcomes, latency percentiles, feedback (--json: all of it)"
    p = r.command(aliases, "compare", compare, help, args=ALIAS_ARGS, show=show_comparison)
    p.add_argument("--since", help="start of the window, RFC 3339 (default: 7 days before --until)")
    p.add_argument("--until", help="end of the window, RFC 3339 (default: now)")


def show_comparison(comparison: AliasComparison, args: argparse.Namespace, out: TextIO) -> None:
    """A line naming the window, then one row per metric and version."""
    print(f"{comparison.model_code} {comparison.alias}: {comparison.since} to {comparison.until}", file=out)
    table(comparison.rows(), COMPARISON_COLUMNS, out, terminal_width(), getattr(args, "wide", False))
