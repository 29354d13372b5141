"""Datasets: closed sessions exported as immutable versions: JSON Lines records, the same records as a
typed table (JSON Lines or Parquet), and a manifest."""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ._transport import Transport, idempotency_key_or_new
from .errors import IntegrityError, NotFound
from .models import RECORD_FIELDS, ApiModel, DatasetManifest, schema_pointer
from .paging import Page

if TYPE_CHECKING:
    import pandas

TableFormat = Literal["jsonl", "parquet"]
PANDAS_HINT = "pip install 'didyma[pandas]' (pandas and pyarrow)"


@dataclass
class Dataset(ApiModel):
    """One dataset version. `records()`, `table_content()` and `to_pandas()` download it and check its SHA-256."""

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
    # {format, media_type, size, sha256} of the typed table; None for versions exported before tables existed.
    table: dict[str, Any] | None
    created_at: str
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    _api: DatasetsApi | None = field(default=None, repr=False, compare=False)

    def content(self) -> bytes:
        """The JSON Lines file as stored, after checking it against the recorded SHA-256."""
        return _checked(self.id, self._require_api().records_bytes(self.id), self.sha256)

    def table_content(self) -> bytes:
        """The table file (JSON Lines or Parquet, see `table["format"]`) as stored, after checking its SHA-256."""
        table = self.require_table()
        return _checked(self.id, self._require_api().table_bytes(self.id), str(table["sha256"]))

    def records(self) -> list[dict[str, Any]]:
        """Every record: one dict per line (see RECORD_FIELDS)."""
        return [json.loads(line) for line in self.content().decode("utf-8").splitlines() if line.strip()]

    def manifest(self) -> DatasetManifest:
        return self._require_api().manifest(self.id)

    def download(self, path: str | Path, *, table: bool = False) -> Path:
        """Writes the checked JSON Lines records (or, with `table=True`, the table file) to `path` and returns it."""
        target = Path(path)
        target.write_bytes(self.table_content() if table else self.content())
        return target

    def to_pandas(self, *, raw: bool = False) -> pandas.DataFrame:
        """A DataFrame with one row per record (needs pandas and pyarrow: `pip install 'didyma[pandas]'`).

        By default the typed table: one column per input feature, output, explanation output and feedback
        field, numbers as numbers, lists as lists, timestamps as UTC datetimes (the manifest's
        `table["columns"]` say where each comes from). `raw=True` gives the records as exported, one
        column per field of RECORD_FIELDS, input and output as JSON text."""
        pandas = _pandas()
        if raw:
            return pandas.DataFrame.from_records(self.records(), columns=list(RECORD_FIELDS))
        table = self.require_table()
        columns: list[dict[str, Any]] = (self.manifest().table or {}).get("columns", [])
        content = self.table_content()
        if table["format"] == "parquet":
            frame = pandas.read_parquet(io.BytesIO(content))
        else:
            rows = [json.loads(line) for line in content.decode("utf-8").splitlines() if line.strip()]
            frame = pandas.DataFrame.from_records(rows, columns=[c["name"] for c in columns])
        return _typed(pandas, frame, columns)

    def require_table(self) -> dict[str, Any]:
        """`table`, or NotFound for a version exported before tables existed."""
        if self.table is None:
            raise NotFound(f"Dataset {self.id} was exported before tables existed: export it again, or use to_pandas(raw=True).", "not_found")
        return self.table

    def _require_api(self) -> DatasetsApi:
        if self._api is None:
            raise RuntimeError("This Dataset was built without a client; read it through Didyma.datasets.")
        return self._api


def _checked(dataset_id: str, data: bytes, sha256: str) -> bytes:
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise IntegrityError(f"Dataset {dataset_id}: downloaded SHA-256 {digest} is not the recorded {sha256}.", "integrity_error")
    return data


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as error:
        raise ImportError(f"Dataset.to_pandas() needs pandas: {PANDAS_HINT}.") from error
    return pandas


def _typed(pandas: Any, frame: Any, columns: list[dict[str, Any]]) -> Any:
    """The same dtypes whatever the table's format: nullable integers, booleans and strings, UTC timestamps in milliseconds."""
    for column in columns:
        name, kind = column["name"], column["type"]
        if kind == "timestamp":
            frame[name] = pandas.to_datetime(frame[name], utc=True, format="ISO8601").astype("datetime64[ms, UTC]")
        elif kind in ("string", "json"):
            frame[name] = frame[name].astype("string")
        elif kind == "int64":
            frame[name] = frame[name].astype("Int64" if column["nullable"] else "int64")
        elif kind == "boolean":
            frame[name] = frame[name].astype("boolean")
        elif kind == "double":
            frame[name] = frame[name].astype("float64")
        elif kind.startswith("list<"):
            frame[name] = [_as_list(value) for value in frame[name]]
    return frame


def _as_list(value: Any) -> list[Any] | None:
    """A list as Python values: Parquet lists arrive as numpy arrays."""
    if value is None:
        return None
    return list(value.tolist() if hasattr(value, "tolist") else value)


class DatasetsApi:
    """Export closed sessions, list, read and download the caller's datasets (public server)."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def _dataset(self, data: dict[str, Any]) -> Dataset:
        return Dataset.from_json(data, _api=self)

    def export_session(
        self,
        model_code: str,
        version: str,
        session_id: str,
        storage_key: str,
        name: str | None = None,
        *,
        format: TableFormat | None = None,
        idempotency_key: str | None = None,
    ) -> Dataset:
        """The caller's CLOSED session as a new version (Conflict while it is OPEN), its table in `format`
        (JSON Lines unless "parquet"). With the same `idempotency_key` (a fresh UUID when not given) a
        repeated call answers the same version."""
        body: dict[str, Any] = {"storage_key": storage_key, "name": name, "format": format}
        path = f"/api/model/{model_code}/version/{version}/session/{session_id}/dataset"
        payload = {k: v for k, v in body.items() if v is not None}
        return self._dataset(self._t.post_json("public", path, payload, idempotency_key=idempotency_key_or_new(idempotency_key)))

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
        format: TableFormat | None = None,
        idempotency_key: str | None = None,
    ) -> Dataset:
        """The caller's CLOSED sessions that match the filter, as the next version of `name`
        (`format` and `idempotency_key` as for `export_session`)."""
        body = {
            "name": name,
            "storage_key": storage_key,
            "model_code": model_code,
            "model_version": model_version,
            "created_after": created_after,
            "created_before": created_before,
            "with_feedback": with_feedback,
            "format": format,
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

    def table_bytes(self, dataset_id: str) -> bytes:
        return self._t.request("public", "GET", f"/api/dataset/{dataset_id}/table").content

    def manifest(self, dataset_id: str) -> DatasetManifest:
        return DatasetManifest.from_json(self._t.get_json("public", f"/api/dataset/{dataset_id}/manifest"))
