"""Typed errors with the API's message_code; logins, refresh and tenancy."""

from __future__ import annotations

import secrets

import pytest

from conftest import IRIS, Iris, Setting, invite_member
from didyma import ApiToken, Conflict, Didyma, NotAuthenticated, NotFound, PermissionDenied, TokenPair, ValidationError


def test_an_unknown_model_is_not_found(member: Didyma) -> None:
    with pytest.raises(NotFound) as error:
        member.models.get("no-such-model", "1")
    assert (error.value.status, error.value.message_code) == (404, "not_found")


def test_feedback_against_the_schema_is_a_validation_error_naming_the_field(member: Didyma, iris: Iris) -> None:
    session = member.open_session(iris.code, iris.version)
    done = member.invoke(iris.code, iris.version, session.id, IRIS).wait()
    with pytest.raises(ValidationError) as error:
        member.feedback(iris.code, iris.version, session.id, done.id, {"correct": "yes"})
    assert error.value.message_code == "validation_error"
    assert "correct" in error.value.message


def test_invoking_in_a_closed_session_is_a_conflict(member: Didyma, iris: Iris) -> None:
    session = member.open_session(iris.code, iris.version)
    member.sessions.close(iris.code, iris.version, session.id)
    with pytest.raises(Conflict) as error:
        member.invoke(iris.code, iris.version, session.id, IRIS)
    assert error.value.message_code == "session_closed"
    member.sessions.reopen(iris.code, iris.version, session.id)
    assert member.invoke(iris.code, iris.version, session.id, IRIS).wait().status == "COMPLETED"


def test_a_member_may_not_manage_storage(member: Didyma) -> None:
    with pytest.raises(PermissionDenied) as error:
        member.storage.list().list()
    assert error.value.message_code == "permission_denied"


def test_a_wrong_password_and_a_wrong_api_token_are_not_authenticated(setting: Setting) -> None:
    with pytest.raises(NotAuthenticated):
        setting.login(setting.admin_email, "wrong-password")
    with Didyma(setting.urls, ApiToken("dy_not-a-token")) as client, pytest.raises(NotAuthenticated):
        client.models.list().list()


def test_an_api_token_acts_as_its_user_until_it_is_revoked(setting: Setting, admin: Didyma, iris: Iris) -> None:
    u = setting.urls
    with Didyma.with_api_token(setting.api_token, auth_url=u.auth, private_url=u.private, public_url=u.public) as client:
        assert client.auth.verify().user_id == admin.auth.verify().user_id
        assert iris.code in [m.model_metadata.model_code for m in client.models.list()]
        [workspace] = [w for w in admin.workspaces.list() if w.name == setting.workspace]
        [token] = [t for t in admin.api_tokens.list(workspace.id) if t.name == "pytest"]
        assert admin.api_tokens.get(workspace.id, token.id).is_active
        admin.api_tokens.set_active(workspace.id, token.id, False)
        with pytest.raises(NotAuthenticated):
            client.models.list().list()
        admin.api_tokens.set_active(workspace.id, token.id, True)
        assert client.models.list().first() is not None


def test_client_credentials_act_as_the_applications_service_user(setting: Setting, iris: Iris) -> None:
    u = setting.urls
    with Didyma.with_client_credentials(setting.client_id, setting.client_secret, setting.workspace, auth_url=u.auth, private_url=u.private, public_url=u.public) as app:
        assert app.auth.verify().workspace == setting.workspace
        session = app.open_session(iris.code, iris.version)
        assert app.invoke(iris.code, iris.version, session.id, IRIS).wait().status == "COMPLETED"
    with pytest.raises(NotAuthenticated):
        Didyma.with_client_credentials(setting.client_id, "wrong-secret", setting.workspace, auth_url=u.auth, private_url=u.private, public_url=u.public).auth.verify()


def test_a_refused_access_token_is_renewed_with_the_refresh_token(setting: Setting) -> None:
    pair = TokenPair(email=setting.admin_email, password=setting.admin_password, workspace=setting.workspace)
    with Didyma(setting.urls, pair) as client:
        assert client.auth.verify().workspace == setting.workspace
        first_refresh = pair.refresh
        pair.access = "expired-or-revoked"
        assert client.auth.verify().workspace == setting.workspace
        assert pair.refresh != first_refresh  # rotated by the refresh


def test_a_saved_refresh_token_alone_logs_in(setting: Setting, admin: Didyma) -> None:
    saved = admin.transport.credentials
    assert isinstance(saved, TokenPair)
    with Didyma(setting.urls, TokenPair(refresh=saved.refresh, workspace=setting.workspace)) as client:
        assert client.auth.verify().user_id == admin.auth.verify().user_id


def test_another_workspace_sees_none_of_the_datasets(admin: Didyma, member: Didyma, setting: Setting, iris: Iris) -> None:
    session = member.open_session(iris.code, iris.version)
    member.invoke(iris.code, iris.version, session.id, IRIS).wait()
    member.sessions.close(iris.code, iris.version, session.id)
    dataset = member.export_session(iris.code, iris.version, session.id, iris.storage_key)

    other = admin.workspaces.create(f"sdk-other-{secrets.token_hex(3)}")
    email, password = invite_member(admin, "supervisor", other.id)
    with setting.login(email, password, other.name) as stranger:
        with pytest.raises(NotFound):
            stranger.datasets.get(dataset.id)
        with pytest.raises(NotFound):
            stranger.datasets.records_bytes(dataset.id)
        assert dataset.id not in [d.id for d in stranger.datasets.list()]
        with pytest.raises(NotFound):
            stranger.sessions.list(iris.code, iris.version).list()
    # A colleague in the same workspace does not see it either: datasets are their author's.
    email, password = invite_member(admin)
    with setting.login(email, password) as colleague:
        with pytest.raises(NotFound):
            colleague.datasets.get(dataset.id)


def test_workspaces_and_invitations_through_the_auth_server(admin: Didyma) -> None:
    created = admin.workspaces.create(f"sdk-lifecycle-{secrets.token_hex(3)}")
    assert admin.workspaces.get(created.id).name == created.name
    assert admin.workspaces.update(created.id, True).disabled is True
    assert created.name in [w.name for w in admin.workspaces.list()]
    admin.workspaces.delete(created.id)
    with pytest.raises(NotFound):
        admin.workspaces.get(created.id)
    invitation = admin.invitations.create("later@example.test", "user")
    assert invitation.id in [i.id for i in admin.invitations.list()]
    admin.invitations.revoke(invitation.id)


def test_staff_read_and_lift_a_login_lock_out(setting: Setting, admin: Didyma) -> None:
    with pytest.raises(NotAuthenticated):
        setting.login(setting.admin_email, "wrong-password-again")
    lock = admin.lockouts.account(setting.admin_email)
    assert (lock.kind, lock.failures >= 1, len(lock.sources) >= 1) == ("account", True, True)
    admin.lockouts.lift_account(setting.admin_email)
    assert admin.lockouts.account(setting.admin_email).failures == 0
    client = admin.lockouts.client(setting.client_id)
    assert (client.kind, client.id) == ("client", setting.client_id)
    admin.lockouts.lift_client(setting.client_id)


def test_staff_list_the_single_sign_on_connections(admin: Didyma) -> None:
    # The platform of these tests has none configured (test/integration/sso-keycloak.test.ts has one).
    assert admin.auth.sso_connections() == []
