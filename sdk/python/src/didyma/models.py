"""The API's records as typed dataclasses.

Each class names the OpenAPI schema it mirrors (`OPENAPI`: server and JSON pointer into that server's
`/openapi.json`); the SDK's contract test fails when a field and the served schema disagree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Generic, TypeVar, overload

M = TypeVar("M", bound="ApiModel")
T = TypeVar("T")


def schema_pointer(name: str) -> str:
    return f"#/components/schemas/{name}"


@dataclass
class ApiModel:
    """Fields as the API sends them; `raw` keeps the whole answer."""

    OPENAPI: ClassVar[tuple[str, str]]

    @classmethod
    def from_json(cls: type[M], data: dict[str, Any], **extra: Any) -> M:
        names = {f.name for f in fields(cls) if f.init}
        values = {k: v for k, v in data.items() if k in names and not k.startswith("_") and k != "raw"}
        return cls(**values, **{"raw": data, **extra})

    @classmethod
    def api_fields(cls) -> set[str]:
        """The fields that mirror the schema's properties."""
        return {f.name for f in fields(cls) if not f.name.startswith("_") and f.name != "raw"}


@dataclass
class Workspace(ApiModel):
    OPENAPI = ("auth", schema_pointer("WorkspaceItemPayload"))
    id: int
    name: str
    disabled: bool
    created_by_id: int | None
    created_at: str
    updated_at: str
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class WorkspaceQuota(ApiModel):
    """How a workspace shares the executors: its weight against other workspaces, and its limits (None: no limit)."""

    OPENAPI = ("auth", schema_pointer("WorkspaceQuota"))
    workspace_id: int
    share_weight: int
    max_in_flight: int | None
    max_queued: int | None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class LoginLock(ApiModel):
    """An account's or client id's failed attempts in the current window, and the sources locked out of it."""

    OPENAPI = ("auth", schema_pointer("LoginLock"))
    kind: str
    id: str
    failures: int
    ceiling: int
    delay_ms: int
    window_ends_at: str | None
    source_limit: int
    locked_sources: int
    sources: list[dict[str, Any]]
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class TokenData(ApiModel):
    OPENAPI = ("auth", schema_pointer("TokenData"))
    token_type: str
    exp: int
    iat: int
    jti: str
    user_id: int
    permissions: list[str]
    workspace: str | None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class ApiToken(ApiModel):
    OPENAPI = ("auth", schema_pointer("ApiTokenItemPayload"))
    id: int
    name: str
    user_id: int
    expiration_date: str
    last_used: str | None
    created: str
    is_active: bool
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class AuditRecord(ApiModel):
    """One entry of the audit trail: who (`actor`) did what (`action`) to which `resource`, and the outcome."""

    OPENAPI = ("auth", schema_pointer("AuditRecord"))
    id: str
    created_at: str
    actor: dict[str, Any]
    workspace_id: int | None
    action: str
    method: str
    path: str
    resource: dict[str, Any]
    outcome: int
    request_id: str
    trace_id: str | None
    source_address: str | None
    suppressed: int
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Invitation(ApiModel):
    OPENAPI = ("auth", schema_pointer("Invitation"))
    id: int
    email: str
    workspace: str
    role: str
    expires_at: str
    invitation_url: str | None = None
    mail_sent: bool | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class RetryPolicy(ApiModel):
    """How the executor retries a model's transient failures; `backoff_ms` None: the platform's default."""

    OPENAPI = ("public", schema_pointer("RetryPolicy"))
    max_attempts: int = 5
    backoff_ms: int | None = None
    backoff_multiplier: float = 2
    retry_on: list[str] = field(default_factory=lambda: ["unreachable", "timeout", "server_error"])
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The policy as registration takes it (`backoff_ms` left out when None)."""
        body: dict[str, Any] = {"max_attempts": self.max_attempts, "backoff_multiplier": self.backoff_multiplier, "retry_on": list(self.retry_on)}
        if self.backoff_ms is not None:
            body["backoff_ms"] = self.backoff_ms
        return body


@dataclass
class ModelMetadata(ApiModel):
    OPENAPI = ("public", schema_pointer("ModelMetadata"))
    model_code: str
    name: str
    description: str
    version: str
    workspace: str
    realtime_execution: bool
    allow_download: bool
    need_context: bool
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    native_metadata: dict[str, Any]
    feedback_schema: dict[str, Any] | None = None
    retry_policy: RetryPolicy | None = None
    # For a model a KServe InferenceService serves, when one model is asked for: its state now (ready, not_ready_reason, latest_ready_revision).
    serving: dict[str, Any] | None = None
    explainer_metadata: ModelMetadata | None = None
    # The aliases of its model code pointing at this version (in listings and on the model asked for).
    aliases: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any], **extra: Any) -> ModelMetadata:
        model = super().from_json(data, **extra)
        if isinstance(data.get("retry_policy"), dict):
            model.retry_policy = RetryPolicy.from_json(data["retry_policy"])
        if isinstance(data.get("explainer_metadata"), dict):
            model.explainer_metadata = ModelMetadata.from_json(data["explainer_metadata"])
        return model


class _OfMetadata(Generic[T]):
    """An attribute of a model listing read from its `model_metadata`, named as there."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, listing: None, owner: type) -> _OfMetadata[T]: ...
    @overload
    def __get__(self, listing: ModelListing, owner: type) -> T: ...
    def __get__(self, listing: ModelListing | None, owner: type) -> T | _OfMetadata[T]:
        if listing is None:
            return self
        value: T = getattr(listing.model_metadata, self._name)
        return value


@dataclass
class ModelListing(ApiModel):
    """One model of a list: the API's `model_metadata`, `is_explainer`, `has_explainer`, and the model's
    own attributes at the top (`listing.model_code` is `listing.model_metadata.model_code`), as `models.get`
    gives them."""

    OPENAPI = ("public", "#/paths/~1api~1model/get/responses/200/content/application~1json/schema/items")
    model_metadata: ModelMetadata
    is_explainer: bool
    has_explainer: bool
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    model_code = _OfMetadata[str]()
    version = _OfMetadata[str]()
    name = _OfMetadata[str]()
    description = _OfMetadata[str]()
    workspace = _OfMetadata[str]()
    realtime_execution = _OfMetadata[bool]()
    allow_download = _OfMetadata[bool]()
    need_context = _OfMetadata[bool]()
    input_schema = _OfMetadata[dict[str, Any]]()
    output_schema = _OfMetadata[dict[str, Any]]()
    native_metadata = _OfMetadata[dict[str, Any]]()
    feedback_schema = _OfMetadata[dict[str, Any] | None]()
    retry_policy = _OfMetadata[RetryPolicy | None]()
    explainer_metadata = _OfMetadata[ModelMetadata | None]()
    aliases = _OfMetadata[list[str]]()

    @classmethod
    def from_json(cls, data: dict[str, Any], **extra: Any) -> ModelListing:
        return cls(ModelMetadata.from_json(data["model_metadata"]), bool(data["is_explainer"]), bool(data["has_explainer"]), raw=data)


@dataclass
class Session(ApiModel):
    OPENAPI = ("public", schema_pointer("Session"))
    id: str
    user_id: str
    model_key: dict[str, str]
    workspace: str
    state: str
    created_at: str | None = None
    # The alias it was opened through (`sessions.create_on_alias`); `model_key` is the version it resolved to, for its life.
    alias: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def model_code(self) -> str:
        return self.model_key["model_code"]

    @property
    def model_version(self) -> str:
        return self.model_key["model_version"]


@dataclass
class AliasPolicy(ApiModel):
    """The traffic policy of an alias: which versions new sessions run, by weight (the alias's own version first),
    kept per session or per user (`sticky`); `shadows` get a copy of each prediction, never returned."""

    OPENAPI = ("private", schema_pointer("AliasPolicy"))
    sticky: str
    weights: list[dict[str, Any]]
    shadows: list[str]
    updated_by: str | None
    updated_at: str
    # What each weighted candidate is held to (`min_invocations`, `max_error_rate`, `max_p99_run_ms`, `feedback`); None: no guards.
    guards: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def split(self) -> dict[str, int]:
        """The weights by version: `{"1": 90, "2": 10}`."""
        return {w["version"]: w["weight"] for w in self.weights}


@dataclass
class ModelAlias(ApiModel):
    """An alias of a model code (`production`) and the live version it points at, with its traffic policy (None: none)."""

    OPENAPI = ("private", schema_pointer("ModelAlias"))
    alias: str
    model_code: str
    version: str
    workspace: str
    updated_by: str | None
    created_at: str
    updated_at: str
    policy: AliasPolicy | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any], **extra: Any) -> ModelAlias:
        alias = super().from_json(data, **extra)
        alias.policy = AliasPolicy.from_json(data["policy"]) if data.get("policy") else None
        return alias


@dataclass
class ModelAliasMove(ApiModel):
    """One move of an alias: set (`from_version` None), moved, deleted (`to_version` None), or its policy changed."""

    OPENAPI = ("private", schema_pointer("ModelAliasMove"))
    id: int
    alias: str
    model_code: str
    from_version: str | None
    to_version: str | None
    moved_by: str | None
    request_id: str | None
    moved_at: str
    # The policy before and after (`{"sticky", "weights", "shadows"}`); a policy change keeps from_version == to_version.
    from_policy: dict[str, Any] | None = None
    to_policy: dict[str, Any] | None = None
    # Why the platform made the change by itself (a guard's rollback, `moved_by` None); None for a person's change.
    reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class InvocationAttempt(ApiModel):
    """One attempt to run an invocation: `outcome` COMPLETED, ERROR, RETRY, CANCELLED or LOST (None while it runs)."""

    OPENAPI = ("public", schema_pointer("InvocationAttempt"))
    attempt: int
    executor: str
    started_at: str
    ended_at: str | None = None
    outcome: str | None = None
    error: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Invocation(ApiModel):
    OPENAPI = ("public", schema_pointer("Invocation"))
    id: str
    order: int
    type: str
    request: dict[str, str]
    status: str
    response: str
    model_key: str
    related_to: str | None = None
    error: str | None = None
    created_at: str | None = None
    started_at: str | None = None
    completed_at: str | None = None
    # Where its outcome is POSTed, when a callback was given.
    callback_url: str | None = None
    # Every attempt, oldest first: given by `invocations.get` and `retry` only (None from lists and other calls).
    attempts: list[InvocationAttempt] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any], **extra: Any) -> Invocation:
        invocation = super().from_json(data, **extra)
        if isinstance(data.get("attempts"), list):
            invocation.attempts = [InvocationAttempt.from_json(attempt) for attempt in data["attempts"]]
        return invocation

    @property
    def finished(self) -> bool:
        """COMPLETED, ERROR or CANCELLED: the status will not change any more."""
        return self.status in ("COMPLETED", "ERROR", "CANCELLED")

    @property
    def session_id(self) -> str:
        return self.request["session_id"]

    def output(self) -> Any:
        """The response parsed as JSON (the text itself when it is not JSON)."""
        try:
            return json.loads(self.response)
        except ValueError:
            return self.response


@dataclass
class WebhookEndpoint(ApiModel):
    """A webhook endpoint of the workspace: where the outcomes of its invocations (and its exported datasets) are POSTed."""

    OPENAPI = ("private", schema_pointer("WebhookEndpoint"))
    id: int
    url: str
    description: str
    events: list[str]
    enabled: bool
    workspace: str
    created_at: str
    updated_at: str
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class WebhookEndpointWithSecret(WebhookEndpoint):
    """An endpoint as created or rotated: the only answers that carry its `whsec_` secret."""

    OPENAPI = ("private", schema_pointer("WebhookEndpointWithSecret"))
    secret: str = field(default="", repr=False)


@dataclass
class WebhookAttempt(ApiModel):
    """One attempt of a delivery: the receiver's status (None when it did not answer), why it failed, the start of its answer."""

    OPENAPI = ("private", schema_pointer("WebhookAttempt"))
    attempt: int
    started_at: str
    duration_ms: int
    status_code: int | None = None
    error: str | None = None
    response: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class WebhookDelivery(ApiModel):
    """One message to an endpoint: `id` is its `webhook-id`, the same on every attempt and redelivery."""

    OPENAPI = ("private", schema_pointer("WebhookDelivery"))
    id: str
    endpoint_id: int
    event_type: str
    url: str
    status: str
    attempt_count: int
    created_at: str
    payload: dict[str, Any]
    next_attempt_at: str | None = None
    last_status_code: int | None = None
    last_error: str | None = None
    delivered_at: str | None = None
    attempts: list[WebhookAttempt] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any], **extra: Any) -> WebhookDelivery:
        delivery = super().from_json(data, **extra)
        delivery.attempts = [WebhookAttempt.from_json(attempt) for attempt in data.get("attempts", [])]
        return delivery


@dataclass
class Deployment(ApiModel):
    OPENAPI = ("private", schema_pointer("Deployment"))
    deployment_key: str
    registry_connector_class: str
    registry_connector_init: dict[str, Any]
    server_proxy_class: str
    server_proxy_init: dict[str, Any]
    workspace: str
    max_concurrent_calls: int | None = None
    # Kubernetes mode only (None without a cluster): pending, applied or failed, and why it failed.
    cluster_state: str | None = None
    cluster_reason: str | None = None
    cluster_message: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class OfferedModel(ApiModel):
    """A model a deployment's registry offers for registration (for KServe: an InferenceService, or its
    explainer as `<name>.explainer`), with the versions the workspace registered from that deployment."""

    OPENAPI = ("private", schema_pointer("OfferedModel"))
    model_code: str
    # The one version it answers to; None when it takes any version name.
    version: str | None
    registered_versions: list[str]
    # name, namespace, platform, component, ready, not_ready_reason, protocol, host, latest_ready_revision, version.
    registry: dict[str, Any]
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class StorageConfig(ApiModel):
    OPENAPI = ("private", schema_pointer("StorageConfiguration"))
    storage_key: str
    storage_class: str
    workspace: str
    connector_init: dict[str, Any] | None = None
    # Kubernetes mode only (None without a cluster): pending, applied or failed, and why it failed.
    cluster_state: str | None = None
    cluster_reason: str | None = None
    cluster_message: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class UploadTicket(ApiModel):
    OPENAPI = ("public", schema_pointer("UploadTicket"))
    upload_id: str
    upload_url: str
    expires_at: str
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class StoredFile(ApiModel):
    OPENAPI = ("public", schema_pointer("StoredFile"))
    file_id: str
    file_name: str
    content_type: str
    size: int
    sha256: str
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class MetricDefinition(ApiModel):
    OPENAPI = ("private", schema_pointer("MetricDefinition"))
    name: str
    description: str
    metrics_query: str
    required_params: list[str]
    optional_params: list[str]
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class MetricResult(ApiModel):
    OPENAPI = ("private", schema_pointer("MetricResult"))
    metric: str
    query: str
    data: dict[str, Any]
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class DatasetManifest(ApiModel):
    OPENAPI = ("public", schema_pointer("DatasetManifest"))
    dataset: dict[str, Any]
    selection: dict[str, Any]
    format: str
    file: str
    row_count: int
    size: int
    sha256: str
    schema: dict[str, Any]
    # The table beside the records and its columns; None for versions exported before tables existed.
    table: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


# The columns of a dataset record, in the order `Dataset.to_pandas()` gives them (checked against DatasetRecord).
RECORD_FIELDS: tuple[str, ...] = (
    "invocation_id",
    "session_id",
    "order",
    "model_code",
    "model_version",
    "type",
    "request_type",
    "input",
    "status",
    "output",
    "error",
    "created_at",
    "started_at",
    "completed_at",
    "explanations",
    "feedback",
)
RECORD_OPENAPI = ("public", schema_pointer("DatasetRecord"))


@dataclass
class AliasVersionOutcomes(ApiModel):
    """How one version behind an alias did over a window: its invocations' outcomes, queue wait and run time
    percentiles (milliseconds), its feedback summarised along its feedback schema and, for a shadow version, how
    often its outputs agreed with its primary's (`agreement`: compared, agreed, rate, interval, tolerance,
    max_compared, truncated; None for a version that was never a shadow)."""

    OPENAPI = ("private", schema_pointer("AliasVersionOutcomes"))
    version: str
    invocations: int
    outcomes: dict[str, int]
    errors: int
    queue_wait_ms: dict[str, Any]
    run_time_ms: dict[str, Any]
    feedback: dict[str, Any]
    agreement: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


# The columns of `AliasComparison.rows()` and of its DataFrame.
COMPARISON_COLUMNS: tuple[str, ...] = ("metric", "version", "value", "low", "high", "count")


@dataclass
class AliasComparison(ApiModel):
    """The versions that sessions opened through an alias ran, compared over `[since, until)`."""

    OPENAPI = ("private", schema_pointer("AliasComparison"))
    model_code: str
    alias: str
    since: str
    until: str
    versions: list[AliasVersionOutcomes]
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any], **extra: Any) -> AliasComparison:
        comparison = super().from_json(data, **extra)
        comparison.versions = [AliasVersionOutcomes.from_json(v) for v in data.get("versions", [])]
        return comparison

    def rows(self) -> list[dict[str, Any]]:
        """One row per metric and version (metric first, then versions in registration order): `value`, its 95%
        interval `low`/`high` where there is one, and the `count` it was computed from."""
        per_version = [(v.version, _outcome_rows(v)) for v in self.versions]
        metrics = list(dict.fromkeys(metric for _, rows in per_version for metric in rows))
        return [
            {"metric": metric, "version": version, **rows[metric]}
            for metric in metrics
            for version, rows in per_version
            if metric in rows
        ]

    def to_pandas(self) -> Any:
        """`rows()` as a pandas DataFrame (needs pandas: `pip install 'didyma[pandas]'`)."""
        try:
            import pandas
        except ImportError as error:
            raise ImportError("AliasComparison.to_pandas() needs pandas: pip install 'didyma[pandas]' (pandas and pyarrow).") from error
        return pandas.DataFrame.from_records(self.rows(), columns=list(COMPARISON_COLUMNS))


def _outcome_rows(v: AliasVersionOutcomes) -> dict[str, dict[str, Any]]:
    """A version's metrics by name, each as value, low, high and count."""
    def row(value: Any, count: Any = None, interval: dict[str, Any] | None = None) -> dict[str, Any]:
        return {"value": value, "low": (interval or {}).get("low"), "high": (interval or {}).get("high"), "count": count}

    rows = {"invocations": row(v.invocations), "errors": row(v.errors, v.invocations)}
    for status in ("completed", "cancelled", "pending"):
        rows[status] = row(v.outcomes.get(status), v.invocations)
    for name, times in (("queue_wait", v.queue_wait_ms), ("run_time", v.run_time_ms)):
        for quantile in ("p50", "p99"):
            rows[f"{name}_{quantile}_ms"] = row(times.get(quantile), times.get("count"))
    rows["feedback"] = row(v.feedback.get("count"))
    for metric in v.feedback.get("properties", []):
        name = f"feedback.{metric['name']}"
        if metric["kind"] == "enum":
            for item in metric.get("values", []):
                rows[f"{name}={json.dumps(item['value'])}"] = row(item["count"], metric["count"])
        else:
            rows[name] = row(metric.get("rate" if metric["kind"] == "boolean" else "mean"), metric["count"], metric.get("interval"))
    if v.agreement is not None:
        rows["agreement"] = row(v.agreement["rate"], v.agreement["compared"], v.agreement["interval"])
    return rows
