"""The custom resource that creates the vector indexes on deploy: against
the real node, answering CloudFormation's pre-signed URL (a real HTTPS server
on loopback, its certificate trusted through SSL_CERT_FILE, as crhelper sends
over HTTPS only), idempotent, and always answering, FAILED included."""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from gligabao.local.embedded import free_port


class Responses:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.content_types: list[str | None] = []


def _self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that is its own authority, and its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
def response_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, Responses]]:
    seen = Responses()
    cert, key = _self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # what crhelper's default context trusts
    monkeypatch.setenv("AWS_REGION", "us-east-1")  # crhelper's own clients (polling, unused)

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self) -> None:
            length = int(self.headers["Content-Length"])
            seen.bodies.append(json.loads(self.rfile.read(length)))
            seen.content_types.append(self.headers.get("Content-Type"))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/cfn-response?sig=x", seen
    finally:
        server.shutdown()
        server.server_close()


class Context:
    def __init__(self, ms: int) -> None:
        self.ms = ms

    def get_remaining_time_in_millis(self) -> int:
        return self.ms


def _event(
    kind: str, url: str, props: dict[str, Any], physical: str | None = None
) -> dict[str, Any]:
    event = {
        "RequestType": kind,
        "ResponseURL": url,
        "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/gb/1",
        "RequestId": uuid.uuid4().hex,
        "LogicalResourceId": "VectorIndexes",
        "ResourceType": "Custom::VectorIndexes",
        "ResourceProperties": {"ServiceToken": "arn:aws:lambda:x", **props},
    }
    if physical:
        event["PhysicalResourceId"] = physical
    return event


def test_creates_the_indexes_idempotently_and_leaves_them_on_delete(
    opensearch_url: str, response_url: tuple[str, Responses]
) -> None:
    from opensearchpy import OpenSearch

    from gligabao.handlers.vector_indexes import lambda_handler

    url, seen = response_url
    prefix = f"gbt-{uuid.uuid4().hex[:10]}-cr"
    # "es": the test node has no Faiss (the Serverless body is pinned elsewhere)
    props = {"Endpoint": opensearch_url, "Service": "es", "Dimension": "8", "IndexPrefix": prefix}
    names = [f"{prefix}-{k}" for k in ("entities", "edges", "chunks", "summaries")]
    client = OpenSearch(hosts=[opensearch_url])
    try:
        lambda_handler(_event("Create", url, props), Context(300_000))
        first = seen.bodies[-1]
        assert first["Status"] == "SUCCESS", first
        assert sorted(first["Data"]["Created"].split(",")) == sorted(names)
        assert seen.content_types[-1] in ("", None)
        for name in names:
            vector = client.indices.get_mapping(index=name)[name]["mappings"]["properties"][
                "vector"
            ]
            assert vector["type"] == "knn_vector" and vector["dimension"] == 8

        physical = first["PhysicalResourceId"]
        lambda_handler(_event("Update", url, props, physical), Context(300_000))
        again = seen.bodies[-1]
        assert again["Status"] == "SUCCESS" and again["Data"]["Created"] == ""
        assert again["PhysicalResourceId"] == physical

        lambda_handler(_event("Delete", url, props, physical), Context(300_000))
        assert seen.bodies[-1]["Status"] == "SUCCESS"
        assert all(client.indices.exists(index=name) for name in names)
    finally:
        client.indices.delete(index=",".join(names), params={"ignore_unavailable": "true"})


def test_answers_failed_when_the_indexes_cannot_be_created(
    response_url: tuple[str, Responses],
) -> None:
    from gligabao.handlers.vector_indexes import lambda_handler

    url, seen = response_url
    props = {"Endpoint": f"http://127.0.0.1:{free_port()}", "Service": "es", "Dimension": "8"}
    # less time left than the reserve and one backoff: no retry loop, but still
    # one answer (crhelper's own FAILED comes only 0.5 s before the end)
    lambda_handler(_event("Create", url, props), Context(21_000))
    [answer] = seen.bodies
    assert answer["Status"] == "FAILED"
    assert answer["Reason"].startswith("opensearch create index")
    assert answer["LogicalResourceId"] == "VectorIndexes"
