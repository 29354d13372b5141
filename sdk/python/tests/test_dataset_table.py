"""A dataset's typed table read by the readers analysts use, as they are: a Parquet export read with
pyarrow and with DuckDB holds, value for value, what the API's records say."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import pandas
import pyarrow
import pyarrow.parquet

from conftest import IRIS, Iris
from didyma import Didyma
from test_walkthrough import finished_chain

ARROW_TYPES = {
    "string": pyarrow.string(),
    "json": pyarrow.string(),
    "int64": pyarrow.int64(),
    "double": pyarrow.float64(),
    "boolean": pyarrow.bool_(),
    "timestamp": pyarrow.timestamp("ms", tz="UTC"),
    "list<double>": pyarrow.list_(pyarrow.float64()),
    "list<string>": pyarrow.list_(pyarrow.string()),
}


def closed_session_with_feedback(member: Didyma, iris: Iris) -> str:
    """An explained prediction with feedback, and a prediction without either, in a CLOSED session."""
    session = member.open_session(iris.code, iris.version)
    prediction, _ = finished_chain(member, iris, session.id)
    member.feedback(iris.code, iris.version, session.id, prediction.id, {"correct": False})
    member.invoke(iris.code, iris.version, session.id, {**IRIS, "petal_length": 4.7}).wait()
    member.sessions.close(iris.code, iris.version, session.id)
    return session.id


def when(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text.replace("Z", "+00:00"))


def tensors(response: str) -> dict[str, Any]:
    """Output tensors by name; a batch of one loses its batch dimension, as the table's columns do."""
    outputs = json.loads(response)["outputs"] if response else []
    return {t["name"]: t["data"][0] if t["shape"] == [1] else t["data"] for t in outputs}


def expected_row(record: dict[str, Any], explainer_key: str) -> dict[str, Any]:
    """What the table must hold for one of the API's records."""
    row: dict[str, Any] = {name: record[name] for name in ("invocation_id", "session_id", "order", "model_code", "model_version", "type", "request_type", "status", "error")}
    row.update({name: when(record[name]) for name in ("created_at", "started_at", "completed_at")})
    row.update({f"input_{name}": value for name, value in json.loads(record["input"]).items()})
    row.update({f"output_{name}": value for name, value in tensors(record["output"]).items()})
    explained = [e for e in record["explanations"] if e["model_key"] == explainer_key]
    explanation = explained[-1] if explained else None
    row["explanation_1_invocation_id"] = explanation["invocation_id"] if explanation else None
    row["explanation_1_status"] = explanation["status"] if explanation else None
    for name, value in tensors(explanation["output"] if explanation else "").items():
        row[f"explanation_1_output_{name}"] = value
    feedback = max(record["feedback"], key=lambda f: f["order"], default=None)
    row["feedback_count"] = len(record["feedback"])
    row["last_feedback_at"] = when(feedback["created_at"]) if feedback else None
    row["feedback_correct"] = json.loads(feedback["body"])["correct"] if feedback else None
    return row


def with_nulls(rows: list[dict[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    return [{name: row.get(name) for name in names} for row in rows]


def test_a_parquet_export_read_by_pyarrow_and_duckdb_holds_every_value_of_the_api_records(member: Didyma, iris: Iris, tmp_path: Path) -> None:
    session_id = closed_session_with_feedback(member, iris)
    dataset = member.export_session(iris.code, iris.version, session_id, iris.storage_key, format="parquet")
    assert dataset.table is not None and dataset.table["format"] == "parquet" and dataset.format == "application/x-ndjson"
    records = dataset.records()
    assert [r["invocation_id"] for r in records] == [i.id for i in sorted(member.invocations.list(iris.code, iris.version, session_id).list(), key=lambda i: i.order) if i.type == "PREDICT"]
    columns = dataset.manifest().table["columns"]  # type: ignore[index]
    names = [c["name"] for c in columns]
    expected = with_nulls([expected_row(r, f"{iris.explainer}:{iris.version}") for r in records], names)
    assert all(set(row) <= set(names) for row in expected)
    path = tmp_path / "iris.parquet"
    dataset.download(path, table=True)

    table = pyarrow.parquet.read_table(path)
    assert table.column_names == names
    assert {c["name"]: table.schema.field(c["name"]).type for c in columns} == {c["name"]: ARROW_TYPES[c["type"]] for c in columns}
    described = json.loads(table.schema.metadata[b"didyma.dataset"])
    assert (described["dataset"]["id"], described["columns"]) == (dataset.id, columns)
    assert table.to_pylist() == expected

    result = duckdb.connect().execute("SELECT * FROM read_parquet(?) ORDER BY \"order\"", [str(path)])
    duck_names = [d[0] for d in result.description]
    assert duck_names == names
    assert [dict(zip(duck_names, values)) for values in result.fetchall()] == expected


def test_to_pandas_types_the_columns_alike_whatever_the_format(member: Didyma, iris: Iris) -> None:
    session_id = closed_session_with_feedback(member, iris)
    exported = {f: member.export_session(iris.code, iris.version, session_id, iris.storage_key, format=f) for f in ("jsonl", "parquet")}
    from_lines, from_parquet = exported["jsonl"].to_pandas(), exported["parquet"].to_pandas()
    pandas.testing.assert_frame_equal(from_lines, from_parquet)
    dtypes = {name: str(dtype) for name, dtype in from_lines.dtypes.items()}
    assert (dtypes["created_at"], dtypes["last_feedback_at"], dtypes["order"], dtypes["feedback_count"]) == ("datetime64[ms, UTC]", "datetime64[ms, UTC]", "int64", "int64")
    assert (dtypes["input_sepal_length"], dtypes["feedback_correct"]) == ("float64", "boolean")
    records = exported["parquet"].records()
    assert from_parquet["output_probabilities"][0] == tensors(records[0]["output"])["probabilities"]
    assert from_parquet["feedback_correct"].isna().tolist() == [False, True] and not from_parquet["feedback_correct"][0]
