"""Tests of the latency proxy, the held embeddings fake and the wave count
(tests/fakes/latency.py), through boto3 and the openai SDK over loopback."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import openai
import pytest

from .latency import Gate, HeldOpenAI, Interval, LatencyProxy, is_record, split, tables_of, waves


def iv(start: float, end: float, op: str = "GetItem") -> Interval:
    return Interval(op, (), start, end)


def test_waves_count_the_longest_chain() -> None:
    assert waves([]) == 0
    assert waves([iv(0, 2), iv(1, 3)]) == 1  # sent together
    assert waves([iv(0, 1), iv(1, 2)]) == 2  # the second after the first's answer
    # Two branches: 0-1 then 2-3 then 4-5, beside a long one 0-4.5.
    assert waves([iv(0, 1), iv(2, 3), iv(4, 5), iv(0, 4.5)]) == 3


def test_split_around_the_embedding() -> None:
    embed = iv(10, 20, "embeddings")
    reads = [iv(0, 5), iv(5, 9), iv(8, 12), iv(12, 15), iv(20, 22), iv(23, 24), iv(23, 25)]
    s = split(reads, embed)
    assert (s.requests, s.before, s.during, s.after) == (7, 2, 2, 2)
    assert s.total == 5  # 0-5, 5-9 (or 8-12), 12-15, 20-22, 23-24


def test_tables_of_bodies() -> None:
    assert tables_of(b'{"TableName": "p_terms"}') == ("p_terms",)
    assert tables_of(b'{"RequestItems": {"p_calls": [], "p_inferences": []}}') == (
        "p_calls",
        "p_inferences",
    )
    assert tables_of(b"not json") == ()
    assert is_record(Interval("BatchWriteItem", ("p_calls", "p_inferences"), 0, 1))
    assert not is_record(Interval("Query", ("p_terms",), 0, 1))


@pytest.fixture
def proxy(moto_url: str) -> Iterator[LatencyProxy]:
    p = LatencyProxy(moto_url, hold_s=0).start()
    yield p
    p.stop()


def dynamodb(url: str) -> Any:
    return boto3.client(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )


def test_proxy_forwards_and_records(proxy: LatencyProxy) -> None:
    client = dynamodb(proxy.url)
    name = f"lat{uuid.uuid4().hex[:8]}_datasets"
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.put_item(TableName=name, Item={"pk": {"S": "a"}, "v": {"S": "x" * 5000}})
    proxy.reset()
    # The answer comes back whole: botocore checks its CRC32 header.
    item = client.get_item(TableName=name, Key={"pk": {"S": "a"}})["Item"]
    assert item["v"]["S"] == "x" * 5000
    [got] = proxy.intervals
    assert (got.op, got.tables) == ("GetItem", (name,))
    assert got.on("datasets") and got.end >= got.start


def test_gate_holds_matching_requests_until_open(proxy: LatencyProxy) -> None:
    client = dynamodb(proxy.url)
    opened = threading.Event()
    gate = Gate(lambda op, _: op == "ListTables", opened, timeout_s=30)
    proxy.gate = gate
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(client.list_tables)
        assert proxy.wait_until(lambda seen: any(op == "ListTables" for op, _, _ in seen), 30)
        assert not future.done() and proxy.intervals == []
        opened.set()
        future.result(timeout=30)
    assert not gate.timed_out
    assert [i.op for i in proxy.intervals] == ["ListTables"]


def test_gate_gives_up_once() -> None:
    gate = Gate(lambda op, _: True, threading.Event(), timeout_s=0.01)
    gate.wait("GetItem", ())
    assert gate.timed_out
    gate.wait("GetItem", ())  # open from now on: no second wait


def test_held_openai_waits_for_its_gate() -> None:
    release = threading.Event()
    with HeldOpenAI(dim=8, gate=release) as fake:
        client = openai.OpenAI(api_key="k", base_url=fake.base_url, max_retries=0)
        with ThreadPoolExecutor(1) as pool:
            future = pool.submit(
                client.embeddings.create, model="text-embedding-3-small", input=["hi"]
            )
            assert fake.arrived.wait(30)
            assert not future.done() and fake.intervals == []
            release.set()
            assert len(future.result(timeout=30).data[0].embedding) == 8
        [got] = fake.intervals
        assert got.op == "embeddings" and got.end >= got.start
        fake.reset()
        assert fake.intervals == [] and not fake.arrived.is_set()
