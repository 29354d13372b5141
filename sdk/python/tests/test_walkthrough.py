"""The walkthrough in a notebook's terms: a member invokes, reads explanations, gives feedback,
closes the session and loads its dataset."""

from __future__ import annotations

import hashlib
import json
import time

import pandas
import pytest

from conftest import IRIS, Iris
from didyma import Conflict, Didyma, Invocation


def finished_chain(member: Didyma, iris: Iris, session_id: str) -> list[Invocation]:
    pending = member.invoke(iris.code, iris.version, session_id, IRIS, with_explanation=True)
    prediction = pending.wait(timeout=60)
    assert prediction.status == "COMPLETED"
    assert prediction.id == pending.id
    for _ in range(600):
        # The API lists newest first; the chain reads oldest first.
        items = sorted(member.invocations.list(iris.code, iris.version, session_id).list(), key=lambda i: i.order)
        if len(items) == 2 and all(i.finished for i in items):
            return items
        time.sleep(0.05)
    raise AssertionError("the explanation did not finish")


def test_models_list_shows_the_registered_chain(member: Didyma, iris: Iris) -> None:
    listed = {(m.model_metadata.model_code, m.is_explainer, m.has_explainer) for m in member.models.list()}
    assert ("iris-classifier", False, True) in listed
    assert ("iris-explainer", True, False) in listed
    model = member.models.get(iris.code, iris.version)
    assert model.explainer_metadata is not None and model.explainer_metadata.model_code == iris.explainer
    assert member.models.model_card(iris.code, iris.version).startswith(b"# Iris")


def test_invoke_wait_feedback_close_export_and_load_into_pandas(member: Didyma, iris: Iris) -> None:
    session = member.open_session(iris.code, iris.version)
    assert session.state == "OPEN"
    prediction, explanation = finished_chain(member, iris, session.id)
    assert (prediction.type, explanation.type, explanation.related_to) == ("PREDICT", "EXPLAIN", prediction.id)
    assert isinstance(prediction.output(), dict)
    assert member.invocations.progress(iris.code, iris.version, session.id, prediction.id) == "COMPLETED"
    feedback = member.feedback(iris.code, iris.version, session.id, prediction.id, {"correct": True})
    assert (feedback.type, feedback.status, feedback.related_to) == ("DATA_SUBMISSION", "COMPLETED", prediction.id)

    with pytest.raises(Conflict) as refused:
        member.export_session(iris.code, iris.version, session.id, iris.storage_key)
    assert refused.value.message_code == "session_open"

    assert member.sessions.close(iris.code, iris.version, session.id).state == "CLOSED"
    dataset = member.export_session(iris.code, iris.version, session.id, iris.storage_key)
    assert (dataset.name, dataset.version, dataset.row_count) == (f"session-{session.id}", 1, 1)

    # The rows are the API's records of the same invocations, field for field.
    [record] = dataset.records()
    assert record["invocation_id"] == prediction.id
    assert record["input"] == prediction.request["body"] == json.dumps(IRIS)
    assert record["output"] == prediction.response
    assert (record["status"], record["created_at"], record["completed_at"]) == (prediction.status, prediction.created_at, prediction.completed_at)
    assert (record["model_code"], record["model_version"], record["session_id"], record["order"]) == (iris.code, iris.version, session.id, prediction.order)
    [explained] = record["explanations"]
    assert (explained["invocation_id"], explained["output"], explained["model_key"]) == (explanation.id, explanation.response, explanation.model_key)
    assert record["feedback"] == [{"invocation_id": feedback.id, "order": feedback.order, "body": '{"correct": true}', "created_at": feedback.created_at}]

    manifest = dataset.manifest()
    assert (manifest.row_count, manifest.sha256, manifest.dataset["id"]) == (1, dataset.sha256, dataset.id)
    assert hashlib.sha256(dataset.content()).hexdigest() == manifest.sha256

    raw = dataset.to_pandas(raw=True)
    assert isinstance(raw, pandas.DataFrame)
    assert list(raw.columns)[:3] == ["invocation_id", "session_id", "order"]
    assert raw.loc[0, "invocation_id"] == prediction.id
    assert raw.loc[0, "feedback"][0]["body"] == '{"correct": true}'

    # The typed table: a column per feature, output, explanation output and feedback field.
    frame = dataset.to_pandas()
    row = frame.iloc[0]
    assert (row["invocation_id"], row["input_sepal_length"], row["feedback_correct"]) == (prediction.id, IRIS["sepal_length"], True)
    assert row["output_predicted_class"] == prediction.output()["outputs"][0]["data"][0]
    assert row["explanation_1_invocation_id"] == explanation.id
    assert row["completed_at"] == pandas.Timestamp(prediction.completed_at)
    assert str(frame["created_at"].dtype) == "datetime64[ms, UTC]" and str(frame["order"].dtype) == "int64"

    again = member.export_session(iris.code, iris.version, session.id, iris.storage_key)
    assert (again.version, again.sha256) == (2, dataset.sha256)
    assert member.datasets.get(dataset.id) == dataset
    assert [d.version for d in member.datasets.list(name=dataset.name)] == [2, 1]


def test_filtered_export_takes_only_closed_sessions_with_feedback(member: Didyma, iris: Iris) -> None:
    closed = member.open_session(iris.code, iris.version)
    with_feedback = member.invoke(iris.code, iris.version, closed.id, IRIS).wait()
    member.invoke(iris.code, iris.version, closed.id, IRIS).wait()
    member.feedback(iris.code, iris.version, closed.id, with_feedback.id, {"correct": False})
    member.sessions.close(iris.code, iris.version, closed.id)
    still_open = member.open_session(iris.code, iris.version)
    member.invoke(iris.code, iris.version, still_open.id, IRIS).wait()

    dataset = member.datasets.export("reviewed", iris.storage_key, model_code=iris.code, model_version=iris.version, with_feedback=True)
    ids = [r["invocation_id"] for r in dataset.records()]
    assert with_feedback.id in ids
    assert all(r["feedback"] for r in dataset.records())
    assert all(r["session_id"] != still_open.id for r in dataset.records())
