"""The comparison of an alias's versions through the SDK and the command line."""

from __future__ import annotations

import argparse
import io
import secrets
import sys
from typing import Any

import pytest

from conftest import IRIS, Iris, Setting
from didyma import AliasComparison, Didyma, NotFound, ValidationError
from didyma._cli_aliases import show_comparison
from test_cli import as_json, cli  # noqa: F401  (the fixture, shared)

SAMPLE: dict[str, Any] = {
    "model_code": "iris-classifier",
    "alias": "production",
    "since": "2026-03-03T00:00:00.000Z",
    "until": "2026-03-10T00:00:00.000Z",
    "versions": [
        {
            "version": "1",
            "invocations": 4,
            "outcomes": {"completed": 3, "error": 1, "cancelled": 0, "pending": 0},
            "errors": 1,
            "queue_wait_ms": {"count": 4, "p50": 12.5, "p99": 40.0},
            "run_time_ms": {"count": 4, "p50": 100.0, "p99": 180.0},
            "feedback": {
                "count": 2,
                "properties": [
                    {"name": "correct", "kind": "boolean", "count": 2, "rate": 0.5, "interval": {"low": 0.09, "high": 0.91, "method": "wilson"}},
                    {"name": "label", "kind": "enum", "count": 2, "values": [{"value": "cat", "count": 2}, {"value": "dog", "count": 0}]},
                ],
            },
        },
        {
            "version": "2",
            "invocations": 1,
            "outcomes": {"completed": 1, "error": 0, "cancelled": 0, "pending": 0},
            "errors": 0,
            "queue_wait_ms": {"count": 1, "p50": 5.0, "p99": 5.0},
            "run_time_ms": {"count": 1, "p50": 90.0, "p99": 90.0},
            "feedback": {"count": 0, "properties": []},
            "agreement": {
                "compared": 4,
                "agreed": 3,
                "rate": 0.75,
                "interval": {"low": 0.30064, "high": 0.95441, "method": "wilson"},
                "tolerance": 1e-6,
                "max_compared": 5000,
                "truncated": True,
            },
        },
    ],
}


def test_rows_put_each_metric_beside_each_version() -> None:
    rows = AliasComparison.from_json(SAMPLE).rows()
    assert [(r["metric"], r["version"]) for r in rows[:4]] == [("invocations", "1"), ("invocations", "2"), ("errors", "1"), ("errors", "2")]
    assert {"metric": "feedback.correct", "version": "1", "value": 0.5, "low": 0.09, "high": 0.91, "count": 2} in rows
    assert {"metric": 'feedback.label="dog"', "version": "1", "value": 0, "low": None, "high": None, "count": 2} in rows
    assert [r["value"] for r in rows if r["metric"] == "queue_wait_p99_ms"] == [40.0, 5.0]
    # Only the shadow version has an agreement row: its rate, Wilson interval and the pairs compared.
    assert [r for r in rows if r["metric"] == "agreement"] == [{"metric": "agreement", "version": "2", "value": 0.75, "low": 0.30064, "high": 0.95441, "count": 4}]


def test_the_table_says_when_a_shadow_was_compared_only_in_part() -> None:
    out = io.StringIO()
    show_comparison(AliasComparison.from_json(SAMPLE), argparse.Namespace(wide=True), out)
    lines = out.getvalue().splitlines()
    assert ["agreement", "2", "0.75", "0.30064", "0.95441", "4"] in [line.split() for line in lines]
    assert lines[-1] == "agreement of 2: the first 4 pairs of the window only; narrow it for the rest"


def test_to_pandas_names_the_missing_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install 'didyma\\[pandas\\]'"):
        AliasComparison.from_json(SAMPLE).to_pandas()


def test_the_comparison_counts_what_sessions_on_the_alias_ran(admin: Didyma, member: Didyma, iris: Iris) -> None:
    alias = f"cmp-{secrets.token_hex(3)}"
    admin.aliases.set(iris.code, alias, iris.version)
    session = member.sessions.create_on_alias(iris.code, alias)
    done = member.invoke(iris.code, session.model_version, session.id, IRIS).wait(timeout=60)
    assert done.status == "COMPLETED"
    member.feedback(iris.code, session.model_version, session.id, done.id, {"correct": True})

    comparison = member.aliases.comparison(iris.code, alias)
    assert (comparison.model_code, comparison.alias) == (iris.code, alias)
    [version] = comparison.versions
    assert (version.version, version.invocations, version.outcomes["completed"], version.errors) == (iris.version, 1, 1, 0)
    assert version.run_time_ms["count"] == 1 and version.run_time_ms["p50"] is not None
    [correct] = version.feedback["properties"]
    assert (correct["name"], correct["count"], correct["rate"]) == ("correct", 1, 1.0)
    # Wilson at 1 of 1: (1 + z²/2) / (1 + z²) minus z·√(z²/4) / (1 + z²), z = 1.96.
    assert correct["interval"]["low"] == pytest.approx(0.20654, abs=1e-5)
    assert ("feedback.correct", iris.version) in [(r["metric"], r["version"]) for r in comparison.rows()]

    # A version that was never a shadow has no agreement; the tolerance is checked all the same.
    assert version.agreement is None and member.aliases.comparison(iris.code, alias, tolerance=0.5).versions[0].agreement is None
    with pytest.raises(ValidationError):
        member.aliases.comparison(iris.code, alias, tolerance=-1)
    with pytest.raises(ValidationError):
        member.aliases.comparison(iris.code, alias, since="2026-03-10T00:00:00Z", until="2026-03-01T00:00:00Z")
    with pytest.raises(NotFound):
        member.aliases.comparison(iris.code, f"never-{secrets.token_hex(3)}")


def test_the_command_line_prints_the_comparison_as_a_table(cli: Any, setting: Setting, iris: Iris) -> None:  # noqa: F811
    alias = f"cmp-{secrets.token_hex(3)}"
    cli("login", "--email", setting.admin_email, "--password", setting.admin_password, "--workspace", setting.workspace)
    cli("aliases", "set", iris.code, alias, iris.version)
    as_json(cli("--json", "aliases", "open-session", iris.code, alias))
    shown = cli("aliases", "compare", iris.code, alias, "--since", "2026-01-01T00:00:00Z", "--until", "2026-01-02T00:00:00Z").stdout
    assert shown.splitlines()[0] == f"{iris.code} {alias}: 2026-01-01T00:00:00.000Z to 2026-01-02T00:00:00.000Z"
    assert shown.splitlines()[1].split() == ["METRIC", "VERSION", "VALUE", "LOW", "HIGH", "COUNT"]
    assert as_json(cli("--json", "aliases", "compare", iris.code, alias))["versions"] == []
    cli("aliases", "compare", iris.code, alias, "--since", "yesterday", code=7)


def test_to_pandas_gives_the_rows_as_a_frame() -> None:
    pytest.importorskip("pandas")
    frame = AliasComparison.from_json(SAMPLE).to_pandas()
    assert list(frame.columns) == ["metric", "version", "value", "low", "high", "count"]
    assert frame[(frame.metric == "feedback.correct") & (frame.version == "1")]["high"].tolist() == [0.91]
