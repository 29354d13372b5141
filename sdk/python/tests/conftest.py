"""Fixtures over a running platform, named by the variables test/integration/python-sdk.test.ts sets
when it starts the platform and pytest: the servers' URLs, the demo model server's, a staff user
who is supervisor of a workspace, an API token and an OAuth application of that workspace."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import parse_qs, urlparse

import pytest

from didyma import Didyma, RetryPolicy, ServerUrls

IRIS = {"sepal_length": 5.1, "sepal_width": 3.5, "petal_length": 1.4, "petal_width": 0.2}
FEEDBACK_SCHEMA = {"type": "object", "properties": {"correct": {"type": "boolean"}}, "required": ["correct"], "additionalProperties": False}


def _required(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests through test/integration/python-sdk.test.ts (npx mocha …), which starts the platform", pytrace=False)
    return value


@dataclass(frozen=True)
class Setting:
    urls: ServerUrls
    demo_url: str
    model_version: str
    slow_demo_url: str
    slow_model_version: str
    admin_email: str
    admin_password: str
    workspace: str
    api_token: str
    client_id: str
    client_secret: str

    def login(self, email: str, password: str, workspace: str | None = None) -> Didyma:
        u = self.urls
        return Didyma.login(email, password, workspace or self.workspace, auth_url=u.auth, private_url=u.private, public_url=u.public)


@pytest.fixture(scope="session")
def setting() -> Setting:
    return Setting(
        ServerUrls(_required("DIDYMA_TEST_AUTH_URL"), _required("DIDYMA_TEST_PRIVATE_URL"), _required("DIDYMA_TEST_PUBLIC_URL")),
        _required("DIDYMA_TEST_DEMO_URL"),
        _required("DIDYMA_TEST_MODEL_VERSION"),
        _required("DIDYMA_TEST_SLOW_DEMO_URL"),
        _required("DIDYMA_TEST_SLOW_MODEL_VERSION"),
        _required("DIDYMA_TEST_ADMIN_EMAIL"),
        _required("DIDYMA_TEST_ADMIN_PASSWORD"),
        _required("DIDYMA_TEST_WORKSPACE"),
        _required("DIDYMA_TEST_API_TOKEN"),
        _required("DIDYMA_TEST_CLIENT_ID"),
        _required("DIDYMA_TEST_CLIENT_SECRET"),
    )


@pytest.fixture(scope="session")
def urls(setting: Setting) -> ServerUrls:
    return setting.urls


@pytest.fixture(scope="session")
def admin(setting: Setting) -> Iterator[Didyma]:
    """A staff user, supervisor of the test workspace."""
    client = setting.login(setting.admin_email, setting.admin_password)
    yield client
    client.close()


@dataclass
class Iris:
    storage_key: str
    code: str
    version: str
    explainer: str


@pytest.fixture(scope="session")
def iris(admin: Didyma, setting: Setting) -> Iris:
    """The demo Iris classifier and its explainer, registered through the SDK."""
    storage = admin.storage.create(f"sdk-{secrets.token_hex(4)}", "didyma.storage.FilesystemStorage", {"path": "sdk-files"})
    card = admin.files.upload(storage.storage_key, b"# Iris\nA demo classifier.", file_name="iris.md", content_type="text/markdown", server="private")
    deploy_demo(admin, setting.demo_url)
    features = {"type": "json", "schema": {"type": "object", "properties": {"sepal_length": {"type": "number"}}}}
    version = setting.model_version
    admin.models.register(
        {
            "model_code": "iris-classifier",
            "version": version,
            "name": "Iris",
            "description": "Iris species",
            "input_schema": features,
            "output_schema": {"type": "json"},
            "model_card_file_id": card.file_id,
            "feedback_schema": FEEDBACK_SCHEMA,
            "explainer": {
                "model_code": "iris-explainer",
                "version": version,
                "name": "Explainer",
                "description": "Contributions",
                "input_schema": {"type": "json"},
                "output_schema": {"type": "json"},
                "need_context": True,
                "model_card_file_id": card.file_id,
            },
        }
    )
    return Iris(storage.storage_key, "iris-classifier", version, "iris-explainer")


def deploy_demo(admin: Didyma, url: str) -> None:
    """A deployment of a demo model server, which serves the models it knows to this workspace."""
    admin.deployments.create(
        f"demo-{secrets.token_hex(4)}",
        "didyma.registry.OpenInferenceRegistryConnector",
        {"model_registry_url": url, "tracking_server_url": url},
        "didyma.proxy.OpenInferenceServerProxy",
        {"server_proxy_url": url},
    )


@dataclass
class SlowModels:
    """The Iris classifier and the model that always fails, each call taking the slow demo server's seconds."""

    version: str
    iris: str = "iris-classifier"
    failing: str = "always-fails"


@pytest.fixture(scope="session")
def slow(admin: Didyma, setting: Setting, iris: Iris) -> SlowModels:
    deploy_demo(admin, setting.slow_demo_url)
    card = admin.files.upload(iris.storage_key, b"# Slow", file_name="slow.md", content_type="text/markdown", server="private")
    models = SlowModels(setting.slow_model_version)
    for code in (models.iris, models.failing):
        payload = {"model_code": code, "version": models.version, "name": code, "description": "Slow on purpose", "input_schema": {"type": "json"}, "output_schema": {"type": "json"}, "model_card_file_id": card.file_id}
        admin.models.register(payload, retry_policy=RetryPolicy(max_attempts=1))
    return models


def invite_member(admin: Didyma, role: str = "user", workspace_id: int | None = None) -> tuple[str, str]:
    """A new user registered through an invitation of `admin`: (e-mail, password)."""
    email = f"member-{secrets.token_hex(4)}@example.test"
    password = f"Member-{secrets.token_hex(6)}-9"
    invitation = admin.invitations.create(email, role, workspace_id)
    token = parse_qs(urlparse(invitation.invitation_url or "").query)["token"][0]
    assert admin.invitations.describe(token)["email"] == email
    admin.invitations.register(token, "Ada", "Member", password)
    return email, password


@pytest.fixture(scope="session")
def member(admin: Didyma, setting: Setting, iris: Iris) -> Iterator[Didyma]:
    """A plain member (role `user`) of the test workspace, invited and registered through the SDK."""
    email, password = invite_member(admin)
    client = setting.login(email, password)
    yield client
    client.close()
