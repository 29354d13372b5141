"""Fixtures over a running platform (`didyma dev`), named by the variables the mocha test sets:
DIDYMA_TEST_AUTH_URL, DIDYMA_TEST_PRIVATE_URL, DIDYMA_TEST_PUBLIC_URL, DIDYMA_TEST_DEMO_URL and
DIDYMA_TEST_ADMIN_PASSWORD (test/integration/python-sdk.test.ts starts the platform and pytest)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import parse_qs, urlparse

import pytest

from didyma import Didyma, ServerUrls

ADMIN_EMAIL = "admin@didyma.local"
IRIS = {"sepal_length": 5.1, "sepal_width": 3.5, "petal_length": 1.4, "petal_width": 0.2}
FEEDBACK_SCHEMA = {"type": "object", "properties": {"correct": {"type": "boolean"}}, "required": ["correct"], "additionalProperties": False}


def _required(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests through test/integration/python-sdk.test.ts (npx mocha …), which starts `didyma dev`", pytrace=False)
    return value


@pytest.fixture(scope="session")
def urls() -> ServerUrls:
    return ServerUrls(_required("DIDYMA_TEST_AUTH_URL"), _required("DIDYMA_TEST_PRIVATE_URL"), _required("DIDYMA_TEST_PUBLIC_URL"))


@pytest.fixture(scope="session")
def admin_password() -> str:
    return _required("DIDYMA_TEST_ADMIN_PASSWORD")


@pytest.fixture(scope="session")
def admin(urls: ServerUrls, admin_password: str) -> Iterator[Didyma]:
    """The first staff user, supervisor of the workspace `default`."""
    client = Didyma.login(ADMIN_EMAIL, admin_password, "default", auth_url=urls.auth, private_url=urls.private, public_url=urls.public)
    yield client
    client.close()


@dataclass
class Iris:
    storage_key: str
    code: str
    version: str
    explainer: str


@pytest.fixture(scope="session")
def iris(admin: Didyma) -> Iris:
    """The demo Iris classifier and its explainer, registered in `default` through the SDK."""
    storage = admin.storage.create("sdk-files", "didyma.storage.FilesystemStorage", {"path": "sdk-files"})
    card = admin.files.upload(storage.storage_key, b"# Iris\nA demo classifier.", file_name="iris.md", content_type="text/markdown", server="private")
    demo = _required("DIDYMA_TEST_DEMO_URL")
    admin.deployments.create(
        "demo",
        "didyma.registry.OpenInferenceRegistryConnector",
        {"model_registry_url": demo, "tracking_server_url": demo},
        "didyma.proxy.OpenInferenceServerProxy",
        {"server_proxy_url": demo},
    )
    features = {"type": "json", "schema": {"type": "object", "properties": {"sepal_length": {"type": "number"}}}}
    admin.models.register(
        {
            "model_code": "iris-classifier",
            "version": "1",
            "name": "Iris",
            "description": "Iris species",
            "input_schema": features,
            "output_schema": {"type": "json"},
            "model_card_file_id": card.file_id,
            "feedback_schema": FEEDBACK_SCHEMA,
            "explainer": {
                "model_code": "iris-explainer",
                "version": "1",
                "name": "Explainer",
                "description": "Contributions",
                "input_schema": {"type": "json"},
                "output_schema": {"type": "json"},
                "need_context": True,
                "model_card_file_id": card.file_id,
            },
        }
    )
    return Iris(storage.storage_key, "iris-classifier", "1", "iris-explainer")


def invite_member(admin: Didyma, urls: ServerUrls, role: str = "user", workspace_id: int | None = None) -> tuple[str, str]:
    """A new user registered through an invitation of `admin`: (e-mail, password)."""
    email = f"member-{secrets.token_hex(4)}@example.test"
    password = f"Member-{secrets.token_hex(6)}-9"
    invitation = admin.invitations.create(email, role, workspace_id)
    token = parse_qs(urlparse(invitation.invitation_url or "").query)["token"][0]
    assert admin.invitations.describe(token)["email"] == email
    admin.invitations.register(token, "Ada", "Member", password)
    return email, password


@pytest.fixture(scope="session")
def member(admin: Didyma, urls: ServerUrls, iris: Iris) -> Iterator[Didyma]:
    """A plain member (role `user`) of `default`, invited and registered through the SDK."""
    email, password = invite_member(admin, urls)
    client = Didyma.login(email, password, "default", auth_url=urls.auth, private_url=urls.private, public_url=urls.public)
    yield client
    client.close()
