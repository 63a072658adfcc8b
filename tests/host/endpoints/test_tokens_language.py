"""A person's own language over `/api/tokens`: given, shown, changed, taken back, and refused
with `UNSUPPORTED_LANGUAGE` when no catalog holds it."""

from __future__ import annotations

from starlette.testclient import TestClient

from tests.host.conftest import AUTH


def shown(client: TestClient, name: str) -> dict[str, object]:
    listed = client.get("/api/tokens", headers=AUTH)
    assert listed.status_code == 200, listed.text
    [token] = [token for token in listed.json()["tokens"] if token["name"] == name]
    return dict(token)


def test_a_persons_language_is_given_changed_and_taken_back(client: TestClient) -> None:
    made = client.post("/api/tokens", json={"name": "alice", "lang": "ja-JP"}, headers=AUTH)
    assert made.status_code == 201, made.text
    assert shown(client, "alice")["lang"] == "ja"
    changed = client.patch("/api/tokens/alice", json={"lang": "zh-Hans"}, headers=AUTH)
    assert changed.status_code == 200, changed.text
    assert shown(client, "alice")["lang"] == "zh_Hans"
    kept = client.patch("/api/tokens/alice", json={"groups": ["ops"]}, headers=AUTH)
    assert kept.status_code == 200, kept.text
    assert shown(client, "alice")["lang"] == "zh_Hans"
    client.patch("/api/tokens/alice", json={"lang": "none"}, headers=AUTH)
    assert "lang" not in shown(client, "alice")


def test_a_language_without_a_catalog_is_refused_and_nothing_is_made(client: TestClient) -> None:
    refused = client.post("/api/tokens", json={"name": "bob", "lang": "fr"}, headers=AUTH)
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "UNSUPPORTED_LANGUAGE"
    assert "fr" in refused.json()["error"]["message"]
    assert all(
        token["name"] != "bob" for token in client.get("/api/tokens", headers=AUTH).json()["tokens"]
    )
    client.post("/api/tokens", json={"name": "carol"}, headers=AUTH)
    patched = client.patch("/api/tokens/carol", json={"lang": "zh-TW"}, headers=AUTH)
    assert patched.status_code == 400
    assert patched.json()["error"]["code"] == "UNSUPPORTED_LANGUAGE"
