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


def test_a_traffic_policy_splits_new_sessions_and_keeps_a_user_on_one_version(admin: Didyma, member: Didyma, iris: Iris, slow: SlowModels) -> None:
    alias = f"pol-{secrets.token_hex(3)}"
    admin.aliases.set(iris.code, alias, iris.version)
    try:
        policy = admin.aliases.set_policy(iris.code, alias, {slow.version: 50, iris.version: 50}, sticky="user")
        # The alias's own version is listed first, whatever order it was given in.
        assert (policy.sticky, policy.split, policy.shadows) == ("user", {iris.version: 50, slow.version: 50}, [])
        assert list(policy.split) == [iris.version, slow.version]
        assert member.aliases.get_policy(iris.code, alias).split == policy.split
        assert member.aliases.get(iris.code, alias).policy == policy
        # Sticky per user: all of one user's sessions run one version.
        assert len({member.sessions.create_on_alias(iris.code, alias).model_version for _ in range(12)}) == 1

        with pytest.raises(ValidationError, match="sum to 95"):
            admin.aliases.set_policy(iris.code, alias, {iris.version: 90, slow.version: 5})
        with pytest.raises(ValidationError, match="also weighted"):
            admin.aliases.set_policy(iris.code, alias, {iris.version: 90, slow.version: 10}, shadows=[slow.version])
        with pytest.raises(PermissionDenied):
            member.aliases.set_policy(iris.code, alias, {iris.version: 100})

        admin.aliases.delete_policy(iris.code, alias)
        with pytest.raises(NotFound):
            admin.aliases.get_policy(iris.code, alias)
        assert admin.aliases.get(iris.code, alias).policy is None
        changes = admin.aliases.history(iris.code, alias).list()
        assert [(m.from_policy is None, m.to_policy is None) for m in changes[:2]] == [(False, True), (True, False)]
        assert changes[1].to_policy == {"sticky": "user", "weights": policy.weights, "shadows": []}
        assert changes[0].reason is None and policy.guards is None
        # Guards pass through: min_invocations filled in by the server.
        guarded = admin.aliases.set_policy(iris.code, alias, {iris.version: 90, slow.version: 10}, guards={"max_error_rate": 0.05})
        assert guarded.guards == {"min_invocations": 100, "max_error_rate": 0.05}
        with pytest.raises(ValidationError, match="guards.min_invocations"):
            admin.aliases.set_policy(iris.code, alias, {iris.version: 100}, guards={"min_invocations": 0})
    finally:
        admin.aliases.delete(iris.code, alias)


def test_the_command_line_sets_reads_and_deletes_a_traffic_policy(cli: Any, setting: Setting, iris: Iris, slow: SlowModels) -> None:  # noqa: F811
    alias = f"clp-{secrets.token_hex(3)}"
    cli("login", "--email", setting.admin_email, "--password", setting.admin_password, "--workspace", setting.workspace)
    cli("aliases", "set", iris.code, alias, iris.version)
    set_ = as_json(cli("--json", "aliases", "policy", "set", iris.code, alias, f"{iris.version}=90", f"{slow.version}=10", "--sticky", "user"))
    assert (set_["sticky"], set_["weights"]) == ("user", [{"version": iris.version, "weight": 90}, {"version": slow.version, "weight": 10}])
    assert slow.version in cli("aliases", "policy", "get", iris.code, alias).stdout
    cli("aliases", "policy", "set", iris.code, alias, f"{iris.version}=ninety", code=7)
    guarded = as_json(cli("--json", "aliases", "policy", "set", iris.code, alias, f"{iris.version}=90", f"{slow.version}=10", "--guards", '{"max_p99_run_ms": 2000}'))
    assert guarded["guards"] == {"min_invocations": 100, "max_p99_run_ms": 2000}
    cli("aliases", "policy", "delete", iris.code, alias)
    cli("aliases", "policy", "get", iris.code, alias, code=5)
    cli("aliases", "delete", iris.code, alias)
