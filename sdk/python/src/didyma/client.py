"""`Didyma`: one client for the auth, private and public servers."""

from __future__ import annotations

import os
from typing import Any

import httpx

from . import sso
from ._transport import ServerUrls, Transport
from .auth import ApiToken, ClientCredentials, Credentials, TokenPair
from .audit import AuditApi
from .datasets import Dataset, DatasetsApi, TableFormat
from .identity import ApiTokensApi, AuthApi, InvitationsApi, WorkspacesApi
from .lockouts import LockoutsApi
from .models import Invocation, Session
from .registry import AliasesApi, DeploymentsApi, FilesApi, MetricsApi, ModelsApi, StorageApi
from .sessions import InvocationsApi, PendingInvocation, SessionsApi
from .webhooks import WebhooksApi

DEV_URLS = ServerUrls("http://127.0.0.1:8080", "http://127.0.0.1:8081", "http://127.0.0.1:8082")


class Didyma:
    """A client of one platform. Build it with `login`, `with_api_token` or `with_client_credentials`.

    Resources: `auth`, `workspaces`, `invitations`, `api_tokens`, `audit`, `lockouts` (auth server); `deployments`, `storage`,
    `metrics`, `webhooks`, model registration and `aliases` (private server); `models`, `sessions`, `invocations`, `files`,
    `datasets` (public server).
    """

    def __init__(self, urls: ServerUrls = DEV_URLS, credentials: Credentials | None = None, *, timeout: float = 30.0, http: httpx.Client | None = None) -> None:
        self.urls = urls
        self.transport = Transport(urls, credentials, timeout=timeout, http=http)
        self.auth = AuthApi(self.transport)
        self.workspaces = WorkspacesApi(self.transport)
        self.invitations = InvitationsApi(self.transport)
        self.api_tokens = ApiTokensApi(self.transport)
        self.audit = AuditApi(self.transport)
        self.lockouts = LockoutsApi(self.transport)
        self.models = ModelsApi(self.transport)
        self.aliases = AliasesApi(self.transport)
        self.deployments = DeploymentsApi(self.transport)
        self.storage = StorageApi(self.transport)
        self.files = FilesApi(self.transport)
        self.metrics = MetricsApi(self.transport)
        self.sessions = SessionsApi(self.transport)
        self.invocations = InvocationsApi(self.transport)
        self.datasets = DatasetsApi(self.transport)
        self.webhooks = WebhooksApi(self.transport)

    @staticmethod
    def urls_from(auth_url: str | None = None, private_url: str | None = None, public_url: str | None = None) -> ServerUrls:
        """The given URLs, else DIDYMA_AUTH_URL, DIDYMA_PRIVATE_URL, DIDYMA_PUBLIC_URL, else `didyma dev`'s."""
        return ServerUrls(
            auth_url or os.environ.get("DIDYMA_AUTH_URL") or DEV_URLS.auth,
            private_url or os.environ.get("DIDYMA_PRIVATE_URL") or DEV_URLS.private,
            public_url or os.environ.get("DIDYMA_PUBLIC_URL") or DEV_URLS.public,
        )

    @classmethod
    def login(cls, email: str, password: str, workspace: str | None = None, *, auth_url: str | None = None, private_url: str | None = None, public_url: str | None = None, **kwargs: Any) -> Didyma:
        """Logs in with e-mail and password (into `workspace`; without one the token can only list workspaces)."""
        credentials = TokenPair(email=email, password=password, workspace=workspace)
        client = cls(cls.urls_from(auth_url, private_url, public_url), credentials, **kwargs)
        # Logs in now, so that wrong credentials fail here rather than at the first call.
        credentials.access_token(client.transport)
        return client

    @classmethod
    def login_sso(
        cls,
        connection: str,
        workspace: str | None = None,
        *,
        dashboard_url: str | None = None,
        open_browser: bool = True,
        device: bool = False,
        timeout: float = 300.0,
        auth_url: str | None = None,
        private_url: str | None = None,
        public_url: str | None = None,
        **kwargs: Any,
    ) -> Didyma:
        """Signs in in the browser through the platform's single sign-on `connection` (docs/sso.md), into `workspace`.

        The browser comes back to a listener of this process on the loopback interface; `open_browser=False` only
        prints the URL to open. `device=True`, on a machine without a browser: prints a code to enter at the provider
        on any other device, and waits up to `timeout` seconds for the sign-in there. The refresh token renews the
        login while the identity provider accepts the person.
        """
        urls = cls.urls_from(auth_url, private_url, public_url)
        with cls(urls) as anonymous:
            if device:
                pair = sso.device_sign_in(anonymous.transport, connection, workspace, timeout=timeout)
            else:
                pair = sso.sign_in(anonymous.transport, dashboard_url or f"{urls.auth.rstrip('/')}/dashboard", connection, workspace, open_browser=open_browser, timeout=timeout)
        return cls(urls, TokenPair(pair["access"], pair["refresh"], workspace=workspace), **kwargs)

    @classmethod
    def with_api_token(cls, token: str, *, auth_url: str | None = None, private_url: str | None = None, public_url: str | None = None, **kwargs: Any) -> Didyma:
        return cls(cls.urls_from(auth_url, private_url, public_url), ApiToken(token), **kwargs)

    @classmethod
    def with_client_credentials(cls, client_id: str, client_secret: str, workspace: str, *, auth_url: str | None = None, private_url: str | None = None, public_url: str | None = None, **kwargs: Any) -> Didyma:
        return cls(cls.urls_from(auth_url, private_url, public_url), ClientCredentials(client_id, client_secret, workspace), **kwargs)

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> Didyma:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # The notebook path, in a few calls.

    def open_session(self, model_code: str, version: str, *, idempotency_key: str | None = None) -> Session:
        return self.sessions.create(model_code, version, idempotency_key=idempotency_key)

    def open_session_on_alias(self, model_code: str, alias: str, *, idempotency_key: str | None = None) -> Session:
        return self.sessions.create_on_alias(model_code, alias, idempotency_key=idempotency_key)

    def invoke(
        self,
        model_code: str,
        version: str,
        session_id: str,
        body: Any,
        *,
        with_explanation: bool = False,
        request_type: str = "FEATURES",
        priority: int | None = None,
        idempotency_key: str | None = None,
        callback_url: str | None = None,
        wait: float | None = None,
    ) -> PendingInvocation:
        """Queues a prediction (`priority` 0 to 9, higher first within the workspace); `.wait()` on the answer gives the finished invocation.
        Calling again with the same `idempotency_key` and body queues nothing new (a fresh key per call when not given).
        `callback_url` is POSTed the outcome when a webhook endpoint of the workspace allows it.
        `wait` (seconds) has the server answer once the prediction finished, within that long (`Prefer: wait`):
        the prediction in one call, `.wait()` then returning it without another request."""
        return self.invocations.create(
            model_code,
            version,
            session_id,
            body,
            request_type=request_type,
            with_explanation=with_explanation,
            priority=priority,
            idempotency_key=idempotency_key,
            callback_url=callback_url,
            wait=wait,
        )

    def feedback(self, model_code: str, version: str, session_id: str, invocation_id: str, body: Any, *, idempotency_key: str | None = None) -> Invocation:
        return self.invocations.feedback(model_code, version, session_id, invocation_id, body, idempotency_key=idempotency_key)

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
        return self.datasets.export_session(model_code, version, session_id, storage_key, name, format=format, idempotency_key=idempotency_key)
