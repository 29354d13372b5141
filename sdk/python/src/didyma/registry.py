"""Models, deployments, storage configurations, files and metrics (private and public servers)."""

from __future__ import annotations

import builtins
import mimetypes
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from ._transport import Transport
from .models import AliasComparison, AliasPolicy, Deployment, MetricDefinition, MetricResult, ModelAlias, ModelAliasMove, ModelListing, ModelMetadata, OfferedModel, RetryPolicy, StorageConfig, StoredFile, UploadTicket
from .paging import Page


class ModelsApi:
    """Listing and reading models (members), registering and deleting them (supervisors)."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def list(self, page_size: int = 100, *, model_code: str | None = None, created_after: str | None = None, created_before: str | None = None) -> Page[ModelListing]:
        """Live models of the workspace, newest first (only the versions of `model_code` when given)."""
        params = {"model_code": model_code, "created_after": created_after, "created_before": created_before}
        return Page(self._t, "public", "/api/model", ModelListing.from_json, params, page_size)

    def get(self, model_code: str, version: str) -> ModelMetadata:
        return ModelMetadata.from_json(self._t.get_json("public", f"/api/model/{model_code}/version/{version}"))

    def register(self, payload: dict[str, Any], *, retry_policy: RetryPolicy | dict[str, Any] | None = None) -> ModelMetadata:
        """Registers a ModelPayload (with its `explainer` chain); the answer is the registered model.

        `retry_policy` (or the payload's own `retry_policy`) sets how the model's transient failures are
        retried; an explainer takes its own in its `explainer` payload."""
        if retry_policy is not None:
            payload = {**payload, "retry_policy": retry_policy.to_json() if isinstance(retry_policy, RetryPolicy) else retry_policy}
        return ModelMetadata.from_json(self._t.post_json("private", "/api/platform_model", payload)[0])

    def register_offered(
        self,
        offer: OfferedModel,
        model_card_file_id: str,
        *,
        version: str | None = None,
        name: str | None = None,
        description: str | None = None,
        **payload: Any,
    ) -> ModelMetadata:
        """Registers a model a deployment offers (`deployments.offered`) under its model_code: at the version it
        answers to, else at `version` (required when it takes any). Schemas its registry derives (KServe: from
        the model's Open Inference metadata) are used unless the payload gives them."""
        if offer.version is not None and version not in (None, offer.version):
            raise ValueError(f"{offer.model_code} answers only to version {offer.version}, not {version}")
        chosen = offer.version or version
        if chosen is None:
            raise ValueError(f"{offer.model_code} takes any version name: give one")
        registry = offer.registry
        where = f"{registry.get('namespace')}/{registry.get('name')}" if registry.get("namespace") else offer.model_code
        body = {
            "model_code": offer.model_code,
            "version": chosen,
            "name": name or offer.model_code,
            "description": description or f"{where}, as its deployment's registry offers it",
            "model_card_file_id": model_card_file_id,
            **payload,
        }
        return self.register(body)

    def delete(self, model_code: str, version: str) -> None:
        self._t.request("private", "DELETE", f"/api/platform_model/{model_code}/version/{version}")

    def model_card(self, model_code: str, version: str) -> bytes:
        return self._t.request("public", "GET", f"/api/platform_model/{model_code}/version/{version}/model_card").content


class AliasesApi:
    """Aliases of model codes (`production` → a version): members read them, supervisors set, delete and read their history."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def set(self, model_code: str, alias: str, version: str) -> ModelAlias:
        """Points the alias at a live version of the model code, creating or moving it; open sessions keep their version."""
        return ModelAlias.from_json(self._t.request("private", "PUT", _alias(model_code, alias), json={"version": version}).json())

    def get(self, model_code: str, alias: str) -> ModelAlias:
        return ModelAlias.from_json(self._t.get_json("private", _alias(model_code, alias)))

    def list(self, model_code: str, page_size: int = 100, *, created_after: str | None = None, created_before: str | None = None) -> Page[ModelAlias]:
        """The model code's aliases, newest first."""
        params = {"created_after": created_after, "created_before": created_before}
        return Page(self._t, "private", f"/api/platform_model/{model_code}/alias", ModelAlias.from_json, params, page_size)

    def delete(self, model_code: str, alias: str) -> None:
        self._t.request("private", "DELETE", _alias(model_code, alias))

    def history(self, model_code: str, alias: str, page_size: int = 100, *, created_after: str | None = None, created_before: str | None = None) -> Page[ModelAliasMove]:
        """Every move of the alias, newest first, also after it was deleted."""
        params = {"created_after": created_after, "created_before": created_before}
        return Page(self._t, "private", f"{_alias(model_code, alias)}/history", ModelAliasMove.from_json, params, page_size)

    def comparison(self, model_code: str, alias: str, since: str | None = None, until: str | None = None, tolerance: float | None = None) -> AliasComparison:
        """How the versions that sessions opened through the alias ran compared over `[since, until)` (RFC 3339; by
        default the 7 days up to now, at most 31 days): outcomes, latency percentiles and feedback per version, and
        each shadow version's agreement with its primary (numbers agree within `tolerance`, absolute, 1e-6 by default)."""
        params = {k: v for k, v in {"since": since, "until": until, "tolerance": tolerance}.items() if v is not None}
        return AliasComparison.from_json(self._t.get_json("private", f"{_alias(model_code, alias)}/comparison", params=params))


    def set_policy(
        self,
        model_code: str,
        alias: str,
        weights: Mapping[str, int],
        *,
        sticky: str = "session",
        shadows: Iterable[str] = (),
        guards: Mapping[str, Any] | None = None,
    ) -> AliasPolicy:
        """Sets the alias's traffic policy: `weights` by version (the alias's own among them, summing to 100), each new
        session kept on its version per `sticky` ("session" or "user"); `shadows` get a copy of each prediction, never returned;
        `guards` (e.g. `{"min_invocations": 200, "max_error_rate": 0.05}`) roll back a candidate that trips one."""
        body: dict[str, Any] = {"sticky": sticky, "weights": [{"version": v, "weight": w} for v, w in weights.items()], "shadows": list(shadows)}
        if guards is not None:
            body["guards"] = dict(guards)
        return AliasPolicy.from_json(self._t.request("private", "PUT", f"{_alias(model_code, alias)}/policy", json=body).json())

    def get_policy(self, model_code: str, alias: str) -> AliasPolicy:
        """The alias's traffic policy; NotFound when it has none."""
        return AliasPolicy.from_json(self._t.get_json("private", f"{_alias(model_code, alias)}/policy"))

    def delete_policy(self, model_code: str, alias: str) -> None:
        """Deletes the alias's traffic policy: new sessions run the alias's version."""
        self._t.request("private", "DELETE", f"{_alias(model_code, alias)}/policy")


def _alias(model_code: str, alias: str) -> str:
    return f"/api/platform_model/{model_code}/alias/{alias}"


class DeploymentsApi:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def create(
        self,
        deployment_key: str,
        registry_connector_class: str,
        registry_connector_init: dict[str, Any],
        server_proxy_class: str,
        server_proxy_init: dict[str, Any],
        max_concurrent_calls: int | None = None,
    ) -> Deployment:
        """`max_concurrent_calls` bounds the calls to its model server at once, across executors (None: no limit)."""
        body: dict[str, Any] = {
            "deployment_key": deployment_key,
            "registry_connector_class": registry_connector_class,
            "registry_connector_init": registry_connector_init,
            "server_proxy_class": server_proxy_class,
            "server_proxy_init": server_proxy_init,
        }
        if max_concurrent_calls is not None:
            body["max_concurrent_calls"] = max_concurrent_calls
        return Deployment.from_json(self._t.post_json("private", "/api/deployment", body)[0])

    def list(self, page_size: int = 100, *, created_after: str | None = None, created_before: str | None = None) -> Page[Deployment]:
        params = {"created_after": created_after, "created_before": created_before}
        return Page(self._t, "private", "/api/deployment", Deployment.from_json, params, page_size)

    def get(self, deployment_key: str) -> Deployment:
        return Deployment.from_json(self._t.get_json("private", f"/api/deployment/{deployment_key}")[0])

    def offered(self, deployment_key: str) -> builtins.list[OfferedModel]:
        """What the deployment's registry offers for registration (supervisor); a registry that does not list its
        models is a Conflict (`not_listable`), another workspace's deployment NotFound."""
        return [OfferedModel.from_json(item) for item in self._t.get_json("private", f"/api/deployment/{deployment_key}/offered_model")]

    def set_max_concurrent_calls(self, deployment_key: str, max_concurrent_calls: int | None) -> Deployment:
        """Changes the limit of calls to its model server at once (supervisor); None removes it."""
        path = f"/api/deployment/{deployment_key}"
        return Deployment.from_json(self._t.request("private", "PATCH", path, json={"max_concurrent_calls": max_concurrent_calls}).json()[0])

    def delete(self, deployment_key: str) -> None:
        self._t.request("private", "DELETE", f"/api/deployment/{deployment_key}")


class StorageApi:
    """Storage configurations of the workspace (supervisors)."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def create(self, storage_key: str, storage_class: str, connector_init: dict[str, Any]) -> StorageConfig:
        body = {"storage_key": storage_key, "storage_class": storage_class, "connector_init": connector_init}
        return StorageConfig.from_json(self._t.post_json("private", "/api/storage", body))

    def list(self, page_size: int = 100, *, created_after: str | None = None, created_before: str | None = None) -> Page[StorageConfig]:
        params = {"created_after": created_after, "created_before": created_before}
        return Page(self._t, "private", "/api/storage", StorageConfig.from_json, params, page_size)

    def get(self, storage_key: str) -> StorageConfig:
        return StorageConfig.from_json(self._t.get_json("private", f"/api/storage/{storage_key}"))

    def delete(self, storage_key: str) -> None:
        self._t.request("private", "DELETE", f"/api/storage/{storage_key}")


class FilesApi:
    """Uploads (request_upload, then proxy_upload) and downloads of files in a storage configuration.

    Members upload through the public server (input and feedback files), supervisors may use the
    private one (model cards); both answer the same.
    """

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def request_upload(self, storage_key: str, file_name: str, content_type: str | None = None, size: int | None = None, server: Literal["public", "private"] = "public") -> UploadTicket:
        body: dict[str, Any] = {"file_name": file_name}
        if content_type:
            body["content_type"] = content_type
        if size is not None:
            body["size"] = size
        return UploadTicket.from_json(self._t.post_json(server, f"/api/storage/{storage_key}/files/request_upload", body))

    def upload(
        self,
        storage_key: str,
        content: str | Path | bytes,
        file_name: str | None = None,
        content_type: str | None = None,
        server: Literal["public", "private"] = "public",
    ) -> StoredFile:
        """Uploads a file (a path, or bytes with a `file_name`); the answer carries `file_id` and its SHA-256."""
        if isinstance(content, bytes):
            if not file_name:
                raise ValueError("file_name is required when uploading bytes")
            data = content
        else:
            data = Path(content).read_bytes()
            file_name = file_name or Path(content).name
        content_type = content_type or mimetypes.guess_type(file_name)[0] or "application/octet-stream"
        ticket = self.request_upload(storage_key, file_name, content_type, len(data), server)
        path = f"/api/storage/{storage_key}/files/proxy_upload/{ticket.upload_id}"
        response = self._t.request(server, "POST", path, files={"file": (file_name, data, content_type)})
        return StoredFile.from_json(response.json())

    def download(self, storage_key: str, file_id: str, server: Literal["public", "private"] = "public") -> bytes:
        return self._t.request(server, "GET", f"/api/storage/{storage_key}/files/{file_id}").content


class MetricsApi:
    """The metric catalog and its queries (supervisors and staff)."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def list(self) -> Page[MetricDefinition]:
        """The metric catalog: a fixed set, answered whole (the one list without paging arguments)."""
        return Page(self._t, "private", "/api/metric", MetricDefinition.from_json, page_size=None)

    def query(self, name: str, *, start: str | int | None = None, end: str | int | None = None, step: str | None = None, **params: str) -> MetricResult:
        """An instant value, or a range with all of start, end and step; `params` are the metric's label filters."""
        return MetricResult.from_json(self._t.get_json("private", f"/api/metric/{name}", {**params, "start": start, "end": end, "step": step}))
