"""Datasets: closed sessions exported as immutable JSON Lines versions, with a manifest."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._transport import Transport, idempotency_key_or_new
from .errors import IntegrityError
from .models import RECORD_FIELDS, ApiModel, DatasetManifest, schema_pointer
from .paging import Page

if TYPE_CHECKING:
    import pandas


@dataclass
class Dataset(ApiModel):
    """One dataset version. `records()` and `to_pandas()` download it and check its SHA-256."""

    OPENAPI = ("public", schema_pointer("Dataset"))
    id: str
    name: str
    version: int
    workspace: str
    storage_key: str
    selection: dict[str, Any]
    format: str
    row_count: int
    size: int
    sha256: str
    created_at: str
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    _api: DatasetsApi | None = field(default=None, repr=False, compare=False)

    def content(self) -> bytes:
        """The JSON Lines file as stored, after checking it against the recorded SHA-256."""
        data = self._require_api().records_bytes(self.id)
        digest = hashlib.sha256(data).hexdigest()
        if digest != self.sha256:
            raise IntegrityError(f"Dataset {self.id}: downloaded SHA-256 {digest} is not the recorded {self.sha256}.", "integrity_error")
        return data

    def records(self) -> list[dict[str, Any]]:
        """Every record: one dict per line (see RECORD_FIELDS)."""
        return [json.loads(line) for line in self.content().decode("utf-8").splitlines() if line.strip()]

    def manifest(self) -> DatasetManifest:
        return self._require_api().manifest(self.id)

    def download(self, path: str | Path) -> Path:
        """Writes the checked JSON Lines file to `path` and returns it."""
        target = Path(path)
        target.write_bytes(self.content())
        return target

    def to_pandas(self) -> pandas.DataFrame:
        """A DataFrame with one row per record and the columns of RECORD_FIELDS (needs pandas installed)."""
        try:
            import pandas
        except ImportError as error:
            raise ImportError("Dataset.to_pandas() needs pandas: pip install 'didyma[pandas]' (or pandas).") from error
        return pandas.DataFrame.from_records(self.records(), columns=list(RECORD_FIELDS))

    def _require_api(self) -> DatasetsApi:
        if self._api is None:
            raise RuntimeError("This Dataset was built without a client; read it through Didyma.datasets.")
        return self._api


class DatasetsApi:
    """Export closed sessions, list, read and download the caller's datasets (public server)."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def _dataset(self, data: dict[str, Any]) -> Dataset:
        return Dataset.from_json(data, _api=self)

    def export_session(self, model_code: str, version: str, session_id: str, storage_key: str, name: str | None = None, *, idempotency_key: str | None = None) -> Dataset:
        """The caller's CLOSED session as a new version (Conflict while it is OPEN). With the same
        `idempotency_key` (a fresh UUID when not given) a repeated call answers the same version."""
        body: dict[str, Any] = {"storage_key": storage_key}
        if name is not None:
            body["name"] = name
        path = f"/api/model/{model_code}/version/{version}/session/{session_id}/dataset"
        return self._dataset(self._t.post_json("public", path, body, idempotency_key=idempotency_key_or_new(idempotency_key)))

    def export(
        self,
        name: str,
        storage_key: str,
        *,
        model_code: str | None = None,
        model_version: str | None = None,
        created_after: str | None = None,
        created_before: str | None = None,
        with_feedback: bool | None = None,
        idempotency_key: str | None = None,
    ) -> Dataset:
        """The caller's CLOSED sessions that match the filter, as the next version of `name`
        (`idempotency_key` as for `export_session`)."""
        body = {
            "name": name,
            "storage_key": storage_key,
            "model_code": model_code,
            "model_version": model_version,
            "created_after": created_after,
            "created_before": created_before,
            "with_feedback": with_feedback,
        }
        payload = {k: v for k, v in body.items() if v is not None}
        return self._dataset(self._t.post_json("public", "/api/dataset", payload, idempotency_key=idempotency_key_or_new(idempotency_key)))

    def list(self, name: str | None = None, page_size: int = 100, *, created_after: str | None = None, created_before: str | None = None) -> Page[Dataset]:
        params = {"name": name, "created_after": created_after, "created_before": created_before}
        return Page(self._t, "public", "/api/dataset", self._dataset, params, page_size)

    def get(self, dataset_id: str) -> Dataset:
        return self._dataset(self._t.get_json("public", f"/api/dataset/{dataset_id}"))

    def records_bytes(self, dataset_id: str) -> bytes:
        return self._t.request("public", "GET", f"/api/dataset/{dataset_id}/records").content

    def manifest(self, dataset_id: str) -> DatasetManifest:
        return DatasetManifest.from_json(self._t.get_json("public", f"/api/dataset/{dataset_id}/manifest"))
