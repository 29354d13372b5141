"""`didyma`: the command line of the Python package (a client of a running platform).

Exit codes: 0 done (also when the reader of the output closed it early, as `head` does); 1 any other API error; 2 bad usage; 3 not logged in or refused credentials (401);
4 permission denied (403); 5 not found (404); 6 conflict (409); 7 invalid input (400, 413, 415, and 422: an idempotency key reused for another request);
8 the invocation ended in ERROR; 9 `--wait` timed out; 10 the platform or a backend is unavailable
(5xx, connection failed).
"""

from __future__ import annotations

import os
import sys

import httpx

from ._cli_commands import build_parser
from ._cli_login import client_from_store
from ._cli_output import emit
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
    UnprocessableEntity,
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
    (UnprocessableEntity, 7),
    (InvocationFailed, 8),
    (WaitTimeout, 9),
    (BackendError, 10),
    (ServiceUnavailable, 10),
]


def exit_code(error: DidymaError) -> int:
    for cls, code in EXIT_CODES:
        if isinstance(error, cls):
            return code
    return 10 if error.status is not None and error.status >= 500 else 1


def quiet_stdout() -> None:
    """Standard output onto /dev/null: what is still buffered goes nowhere instead of failing at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    client: Didyma | None = None
    try:
        client = client_from_store(args) if args.needs_client else None
        result = args.run(args, client)
        if result is not None and args.show and not args.json:
            args.show(result, args, sys.stdout)
        elif result is not None:
            emit(result, args.json, args.columns, wide=args.wide)
        # Written out here, so that a reader that has gone is met below rather than at the interpreter's exit.
        sys.stdout.flush()
        return 0
    except BrokenPipeError:
        # Piped into `head` or the like: the reader took what it wanted and closed, which is no error.
        quiet_stdout()
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
