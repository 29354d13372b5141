"""How the command line's commands are added: a name, what it runs, and how its answer is shown."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import Any, TextIO

Run = Callable[[argparse.Namespace, Any], Any]
# How a command shows its answer to people, when a table or key/value lines would not do.
Show = Callable[[Any, argparse.Namespace, TextIO], None]


def accept_output_options(parser: argparse.ArgumentParser) -> None:
    """`--json` and `--wide` wherever they are written, after a command as before it; not given there, the earlier one stands."""
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON instead of tables")
    parser.add_argument("--wide", action="store_true", default=argparse.SUPPRESS, help="print tables without cutting any cell")


class Registrar:
    """Adds commands: each names what it runs, the table columns it prints (or how it shows its answer) and its
    positional arguments."""

    def __init__(self, groups: Any) -> None:
        self.groups = groups

    def command(
        self,
        sub: Any,
        name: str,
        run: Run,
        help: str,
        columns: list[str] | None = None,
        args: Iterable[str] = (),
        needs_client: bool = True,
        show: Show | None = None,
    ) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = sub.add_parser(name, help=help, description=help)
        parser.set_defaults(run=run, columns=columns, needs_client=needs_client, show=show)
        accept_output_options(parser)
        for arg in args:
            parser.add_argument(arg)
        return parser

    def group(self, name: str, help: str) -> Any:
        parser = self.groups.add_parser(name, help=help, description=help)
        accept_output_options(parser)
        return parser.add_subparsers(dest="action", required=True, metavar="ACTION")
