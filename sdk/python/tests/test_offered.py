"""Models a deployment's registry offers for registration: listing them, and registering one."""

from __future__ import annotations

import secrets
from typing import Any

import pytest

from didyma import Conflict, Didyma, OfferedModel
from didyma._cli_commands import build_parser
from didyma.registry import ModelsApi

from conftest import Setting

KSERVE_OFFER = {
    "model_code": "iris",
    "version": None,
    "registered_versions": ["1"],
    "registry": {"name": "iris", "namespace": "models", "platform": "kserve", "component": "predictor", "ready": True, "protocol": "v2", "host": "iris-predictor.models:80"},
}


class Registered(Exception):
    """What a registration would have sent, stopped before the network."""


class RecordingTransport:
    def post_json(self, server: str, path: str, body: dict[str, Any]) -> Any:
        raise Registered(server, path, body)


def sent(offer: OfferedModel, **options: Any) -> dict[str, Any]:
    with pytest.raises(Registered) as raised:
        ModelsApi(RecordingTransport()).register_offered(offer, "card-1", **options)  # type: ignore[arg-type]
    server, path, body = raised.value.args
    assert (server, path) == ("private", "/api/platform_model")
    return dict(body)


def test_registering_an_offer_takes_its_model_code_and_the_version_it_answers_to() -> None:
    offer = OfferedModel.from_json(KSERVE_OFFER)
    assert sent(offer, version="2") == {"model_code": "iris", "version": "2", "name": "iris", "description": "models/iris, as its deployment's registry offers it", "model_card_file_id": "card-1"}
    with pytest.raises(ValueError, match="takes any version name"):
        sent(offer)
    pinned = OfferedModel.from_json({**KSERVE_OFFER, "version": "3"})
    assert sent(pinned, name="Iris", input_schema={"type": "json"})["version"] == "3"
    assert sent(pinned, name="Iris", input_schema={"type": "json"})["input_schema"] == {"type": "json"}
    with pytest.raises(ValueError, match="answers only to version 3"):
        sent(pinned, version="4")


def test_the_cli_lists_offers_and_registers_one() -> None:
    args = build_parser().parse_args(["deployments", "offered", "kserve-models"])
    assert (args.deployment_key, args.columns[:3]) == ("kserve-models", ["model_code", "version", "registered_versions"])
    args = build_parser().parse_args(["models", "register-offered", "kserve-models", "iris.explainer", "--card", "f1", "--version", "2"])
    assert (args.deployment_key, args.model_code, args.card, args.version) == ("kserve-models", "iris.explainer", "f1", "2")


def test_a_registry_that_does_not_list_its_models_says_so(admin: Didyma, setting: Setting) -> None:
    key = f"demo-{secrets.token_hex(4)}"
    url = setting.demo_url
    admin.deployments.create(key, "didyma.registry.OpenInferenceRegistryConnector", {"model_registry_url": url}, "didyma.proxy.OpenInferenceServerProxy", {"server_proxy_url": url})
    with pytest.raises(Conflict) as raised:
        admin.deployments.offered(key)
    assert raised.value.message_code == "not_listable"
