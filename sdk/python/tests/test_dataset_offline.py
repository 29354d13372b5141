"""Dataset downloads are checked against their SHA-256, and to_pandas() says what is missing."""

from __future__ import annotations

import hashlib
import sys
from typing import Any

import pytest

from didyma import Dataset, IntegrityError, NotFound
from didyma.datasets import DatasetsApi

LINES = b'{"invocation_id": "i0", "feedback": []}\n{"invocation_id": "i1", "feedback": []}\n'


class StoredRecords(DatasetsApi):
    def __init__(self, content: bytes) -> None:
        self.content = content

    def records_bytes(self, dataset_id: str) -> bytes:
        return self.content


def dataset(content: bytes, sha256: str) -> Dataset:
    fields: dict[str, Any] = {
        "id": "d1",
        "name": "n",
        "version": 1,
        "workspace": "w",
        "storage_key": "s",
        "selection": {"kind": "filter"},
        "format": "application/x-ndjson",
        "row_count": 2,
        "size": len(content),
        "sha256": sha256,
        "table": None,
        "created_at": "2026-01-01T00:00:00Z",
    }
    return Dataset.from_json(fields, _api=StoredRecords(content))


def test_reads_records_whose_checksum_matches() -> None:
    assert [r["invocation_id"] for r in dataset(LINES, hashlib.sha256(LINES).hexdigest()).records()] == ["i0", "i1"]


def test_refuses_a_download_that_does_not_match_its_checksum() -> None:
    with pytest.raises(IntegrityError):
        dataset(LINES, "0" * 64).records()


def test_to_pandas_names_the_missing_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install 'didyma\\[pandas\\]'"):
        dataset(LINES, hashlib.sha256(LINES).hexdigest()).to_pandas()


def test_to_pandas_of_a_version_without_a_table_says_to_export_again_or_read_it_raw() -> None:
    old = dataset(LINES, hashlib.sha256(LINES).hexdigest())
    with pytest.raises(NotFound, match="export it again"):
        old.to_pandas()
    assert list(old.to_pandas(raw=True)["invocation_id"]) == ["i0", "i1"]
