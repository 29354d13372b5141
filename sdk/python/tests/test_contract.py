"""The SDK against the OpenAPI documents the servers serve: a drifted field or an endpoint the SDK
does not cover fails here."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

import didyma
from didyma import Didyma, ServerUrls, models
from didyma.datasets import Dataset
from didyma.models import ApiModel

# Every operation of the three servers and the SDK call that makes it.
OPERATIONS: dict[str, str] = {
    "obtainToken": "Didyma.login / TokenPair",
    "refreshToken": "TokenPair",
    "redeemSsoCode": "Didyma.login_sso / didyma login --sso",
    "startSsoDeviceSignIn": "Didyma.login_sso(device=True) / didyma login --sso --device",
    "pollSsoDeviceSignIn": "Didyma.login_sso(device=True) / didyma login --sso --device",
    "listSsoConnections": "auth.sso_connections",
    "verifyToken": "auth.verify",
    "jwks": "auth.jwks",
    "clientCredentialsToken": "ClientCredentials",
    "listWorkspaces": "workspaces.list",
    "createWorkspace": "workspaces.create",
    "getWorkspace": "workspaces.get",
    "updateWorkspace": "workspaces.update",
    "deleteWorkspace": "workspaces.delete",
    "uploadWorkspaceLogo": "workspaces.upload_logo",
    "downloadWorkspaceLogo": "workspaces.download_logo",
    "getWorkspaceQuota": "workspaces.quota",
    "updateWorkspaceQuota": "workspaces.set_quota",
    "listApiTokens": "api_tokens.list",
    "getApiToken": "api_tokens.get",
    "updateApiToken": "api_tokens.set_active",
    "deleteApiToken": "api_tokens.delete",
    "createInvitation": "invitations.create",
    "listInvitations": "invitations.list",
    "revokeInvitation": "invitations.revoke",
    "describeInvitation": "invitations.describe",
    "acceptInvitation": "invitations.accept",
    "register": "invitations.register",
    "listAuditRecords": "audit.list",
    "getAccountLock": "lockouts.account",
    "liftAccountLock": "lockouts.lift_account",
    "getClientLock": "lockouts.client",
    "liftClientLock": "lockouts.lift_client",
    "registerModel": "models.register",
    "deleteModel": "models.delete",
    "listModelAliases": "aliases.list",
    "getModelAlias": "aliases.get",
    "setModelAlias": "aliases.set",
    "deleteModelAlias": "aliases.delete",
    "getModelAliasHistory": "aliases.history",
    "getAliasPolicy": "aliases.get_policy",
    "setAliasPolicy": "aliases.set_policy",
    "deleteAliasPolicy": "aliases.delete_policy",
    "getModelAliasComparison": "aliases.comparison / didyma aliases compare",
    "createAliasSession": "sessions.create_on_alias",
    "createDeployment": "deployments.create",
    "listDeployments": "deployments.list",
    "getDeployment": "deployments.get",
    "updateDeployment": "deployments.set_max_concurrent_calls",
    "deleteDeployment": "deployments.delete",
    "listOfferedModels": "deployments.offered / models.register_offered",
    "createStorage": "storage.create",
    "listStorage": "storage.list",
    "getStorage": "storage.get",
    "deleteStorage": "storage.delete",
    "requestUpload": "files.request_upload",
    "proxyUpload": "files.upload",
    "downloadFile": "files.download",
    "listMetrics": "metrics.list",
    "queryMetric": "metrics.query",
    "listModels": "models.list",
    "getModel": "models.get",
    "downloadModelCard": "models.model_card",
    "listSessions": "sessions.list",
    "createSession": "sessions.create",
    "updateSessionState": "sessions.set_state",
    "listInvocations": "invocations.list",
    "createInvocation": "invocations.create",
    "getInvocation": "invocations.get",
    "checkProgress": "invocations.progress",
    "createFeedback": "invocations.feedback",
    "cancelInvocation": "invocations.cancel",
    "retryInvocation": "invocations.retry",
    "cancelSessionInvocations": "sessions.cancel",
    "streamSessionEvents": "sessions.events",
    "exportSessionDataset": "datasets.export_session",
    "exportDataset": "datasets.export",
    "listDatasets": "datasets.list",
    "getDataset": "datasets.get",
    "downloadDatasetRecords": "datasets.records_bytes",
    "downloadDatasetTable": "datasets.table_bytes",
    "downloadDatasetManifest": "datasets.manifest",
    "createWebhookEndpoint": "webhooks.create",
    "listWebhookEndpoints": "webhooks.list",
    "getWebhookEndpoint": "webhooks.get",
    "updateWebhookEndpoint": "webhooks.update",
    "deleteWebhookEndpoint": "webhooks.delete",
    "rotateWebhookSecret": "webhooks.rotate_secret",
    "listWebhookDeliveries": "webhooks.deliveries",
    "getWebhookDelivery": "webhooks.delivery",
    "redeliverWebhook": "webhooks.redeliver",
}


# Served only where the platform's operator exposes API-token management (off by default).
OPTIONAL = {"listApiTokens", "getApiToken", "updateApiToken", "deleteApiToken"}


@pytest.fixture(scope="module")
def documents(urls: ServerUrls) -> dict[str, dict[str, Any]]:
    return {server: httpx.get(f"{urls.of(server)}/openapi.json").raise_for_status().json() for server in ("auth", "private", "public")}


def resolve(document: dict[str, Any], pointer: str) -> dict[str, Any]:
    node: Any = document
    for part in pointer.lstrip("#/").split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    while "$ref" in node:
        node = resolve(document, node["$ref"])
    return dict(node)


def record_classes() -> list[type[ApiModel]]:
    found = [cls for cls in vars(models).values() if isinstance(cls, type) and issubclass(cls, ApiModel) and cls is not ApiModel]
    return [*found, Dataset]


@pytest.mark.parametrize("cls", record_classes(), ids=lambda cls: cls.__name__)
def test_each_record_class_has_exactly_the_fields_of_its_served_schema(cls: type[ApiModel], documents: dict[str, dict[str, Any]]) -> None:
    server, pointer = cls.OPENAPI
    schema = resolve(documents[server], pointer)
    assert set(schema["properties"]) == cls.api_fields(), f"{cls.__name__} and {server} {pointer} disagree"


def test_dataset_records_have_the_columns_of_the_served_schema(documents: dict[str, dict[str, Any]]) -> None:
    server, pointer = models.RECORD_OPENAPI
    schema = resolve(documents[server], pointer)
    assert set(models.RECORD_FIELDS) == set(schema["properties"])
    assert list(models.RECORD_FIELDS) == schema["required"]


def test_every_served_operation_has_an_sdk_call(documents: dict[str, dict[str, Any]]) -> None:
    served = {
        operation["operationId"]
        for document in documents.values()
        for item in document["paths"].values()
        for method, operation in item.items()
        if isinstance(operation, dict) and "operationId" in operation
    }
    assert sorted(served - set(OPERATIONS)) == [], "operations the SDK does not cover"
    assert sorted(set(OPERATIONS) - served - OPTIONAL) == [], "SDK calls of operations no server serves"


def test_every_listed_sdk_call_exists(urls: ServerUrls) -> None:
    client = Didyma(urls)
    for call in OPERATIONS.values():
        target = call.split(" / ")[0]
        if "." in target and not target.startswith("Didyma."):
            resource, method = target.split(".")
            assert callable(getattr(getattr(client, resource), method)), call
        else:
            assert hasattr(didyma, target.split(".")[0]), call
    client.close()
