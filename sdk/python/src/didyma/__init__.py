"""didyma: the Python client of the didyma model-serving platform."""

from ._transport import ServerUrls
from .auth import ApiToken, ClientCredentials, TokenPair
from .client import DEV_URLS, Didyma
from .datasets import Dataset
from .errors import (
    BackendError,
    Conflict,
    DidymaError,
    Gone,
    IntegrityError,
    InvocationFailed,
    NotAuthenticated,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    ServiceUnavailable,
    UnsupportedMediaType,
    ValidationError,
    WaitTimeout,
)
from .models import (
    RECORD_FIELDS,
    ApiToken as ApiTokenRecord,
    DatasetManifest,
    Deployment,
    Invitation,
    Invocation,
    MetricDefinition,
    MetricResult,
    ModelListing,
    ModelMetadata,
    Session,
    StorageConfig,
    StoredFile,
    TokenData,
    UploadTicket,
    Workspace,
)
from .paging import Page
from .sessions import PendingInvocation

__version__ = "0.1.0"

__all__ = [
    "DEV_URLS",
    "RECORD_FIELDS",
    "ApiToken",
    "ApiTokenRecord",
    "BackendError",
    "ClientCredentials",
    "Conflict",
    "Dataset",
    "DatasetManifest",
    "Deployment",
    "Didyma",
    "DidymaError",
    "Gone",
    "IntegrityError",
    "Invitation",
    "Invocation",
    "InvocationFailed",
    "MetricDefinition",
    "MetricResult",
    "ModelListing",
    "ModelMetadata",
    "NotAuthenticated",
    "NotFound",
    "Page",
    "PayloadTooLarge",
    "PendingInvocation",
    "PermissionDenied",
    "RateLimited",
    "ServerUrls",
    "ServiceUnavailable",
    "Session",
    "StorageConfig",
    "StoredFile",
    "TokenData",
    "TokenPair",
    "UnsupportedMediaType",
    "UploadTicket",
    "ValidationError",
    "WaitTimeout",
    "Workspace",
]
