"""Aliases of a model code through the SDK and the command line: set, move, sessions that keep their version."""

from __future__ import annotations

import secrets
from typing import Any

import pytest

from conftest import IRIS, Iris, Setting, SlowModels
from didyma import Didyma, NotFound, PermissionDenied, ValidationError
from test_cli import as_json, cli  # noqa: F401  (the fixture, shared)


def test_an_alias_moves_and_its_sessions_keep_their_version(admin: Didyma, member: Didyma, iris: Iris, slow: SlowModels) -> None:
    alias = f"sdk-{secrets.token_hex(3)}"
    try:
        assert admin.aliases.set(iris.code, alias, iris.version).version == iris.version
        first = member.sessions.create_on_alias(iris.code, alias)
        assert (first.alias, first.model_version) == (alias, iris.version)

        moved = admin.aliases.set(iris.code, alias, slow.version)
        assert moved.version == slow.version and moved.updated_by is not None
        later = member.open_session_on_alias(iris.code, alias)
        assert later.model_version == slow.version
        # The first session still runs the version it opened on.
        assert member.invoke(iris.code, iris.version, first.id, IRIS).wait(timeout=60).status == "COMPLETED"
        assert [s.alias for s in member.sessions.list(iris.code, iris.version) if s.id == first.id] == [alias]

        assert member.aliases.get(iris.code, alias).version == slow.version
        assert alias in [a.alias for a in member.aliases.list(iris.code)]
        assert alias in [m for listing in member.models.list(model_code=iris.code) if listing.version == slow.version for m in listing.aliases]
        assert alias in member.models.get(iris.code, slow.version).aliases
        with pytest.raises(PermissionDenied):
            member.aliases.set(iris.code, alias, iris.version)
        with pytest.raises(ValidationError):
            admin.aliases.set(iris.code, alias, "never-registered")
        with pytest.raises(ValidationError):
            admin.aliases.set(iris.code, "Not_An_Alias", iris.version)
    finally:
        admin.aliases.delete(iris.code, alias)
    moves = admin.aliases.history(iris.code, alias).list()
    assert [(m.from_version, m.to_version) for m in moves] == [(slow.version, None), (iris.version, slow.version), (None, iris.version)]
    with pytest.raises(NotFound):
        member.sessions.create_on_alias(iris.code, alias)


def test_the_command_line_sets_an_alias_and_opens_a_session_on_it(cli: Any, setting: Setting, iris: Iris) -> None:  # noqa: F811
    alias = f"cli-{secrets.token_hex(3)}"
    cli("login", "--email", setting.admin_email, "--password", setting.admin_password, "--workspace", setting.workspace)
    assert as_json(cli("--json", "aliases", "set", iris.code, alias, iris.version))["version"] == iris.version
    assert alias in cli("aliases", "list", iris.code).stdout
    opened = as_json(cli("--json", "aliases", "open-session", iris.code, alias))
    assert (opened["alias"], opened["model_key"]["model_version"]) == (alias, iris.version)
    cli("aliases", "delete", iris.code, alias)
    history = as_json(cli("--json", "aliases", "history", iris.code, alias))
    assert [(m["from_version"], m["to_version"]) for m in history] == [(iris.version, None), (None, iris.version)]
    cli("aliases", "get", iris.code, alias, code=5)
