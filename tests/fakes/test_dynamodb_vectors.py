"""The DynamoDB vector fake itself: the real boto3 client against it (and
moto behind it), each documented behaviour and error, the lag, the metering."""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from fakes.dynamodb_vectors import FakeDynamoVectors

DIM = 3


@pytest.fixture
def fake(moto_server_url: str, aws_env: None) -> Iterator[FakeDynamoVectors]:
    with FakeDynamoVectors(moto_server_url) as f:
        yield f


def client(fake: FakeDynamoVectors, **kw: Any) -> Any:
    return boto3.client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url=fake.url,
        config=Config(retries={"max_attempts": 3, "mode": "standard"}),
        **kw,
    )


def index_spec(
    name: str = "vix",
    dims: int = DIM,
    distance: str = "COSINE",
    filters: tuple[str, ...] = ("state",),
    projection: str = "KEYS_ONLY",
) -> dict[str, Any]:
    schema = [{"AttributeName": "pk", "SearchSchemaElementType": "HASH"}]
    schema += [{"AttributeName": f, "SearchSchemaElementType": "INLINE_FILTER"} for f in filters]
    return {
        "IndexName": name,
        "VectorAttribute": {"AttributeName": "vec"},
        "Dimensions": dims,
        "DistanceFunction": distance,
        "SearchSchema": schema,
        "Projection": {"ProjectionType": projection},
    }


def make_table(c: Any, *specs: dict[str, Any], billing: str = "PAY_PER_REQUEST") -> str:
    name = f"t{uuid.uuid4().hex[:10]}"
    kw: dict[str, Any] = {"BillingMode": billing}
    if billing == "PROVISIONED":
        kw["ProvisionedThroughput"] = {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}
    c.create_table(
        TableName=name,
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "id", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "id", "AttributeType": "N"},
            {"AttributeName": "state", "AttributeType": "S"},
        ],
        VectorIndexes=list(specs) if specs else [index_spec()],
        **kw,
    )
    return name


def vec(*xs: float) -> dict[str, Any]:
    return {"L": [{"N": repr(float(x))} for x in xs]}


def put(c: Any, table: str, pk: str, i: int, v: dict[str, Any] | None, **attrs: str) -> Any:
    item: dict[str, Any] = {"pk": {"S": pk}, "id": {"N": str(i)}}
    if v is not None:
        item["vec"] = v
    item.update({k: {"S": s} for k, s in attrs.items()})
    return c.put_item(TableName=table, Item=item, ReturnConsumedCapacity="INDEXES")


def search(
    c: Any,
    table: str,
    q: list[float],
    k: int = 10,
    cond: str = "pk = :p",
    values: dict[str, Any] | None = None,
    **kw: Any,
) -> Any:
    return c.search_vectors(
        TableName=table,
        IndexName=kw.pop("index", "vix"),
        SearchVector=[{"N": str(x)} for x in q],
        TopK=k,
        SearchConditionExpression=cond,
        ExpressionAttributeValues=values if values is not None else {":p": {"S": "a"}},
        **kw,
    )


def ids(resp: Any) -> list[int]:
    return [int(r["Item"]["id"]["N"]) for r in resp["SearchResults"]]


def error(exc: pytest.ExceptionInfo[ClientError]) -> tuple[str, str]:
    return exc.value.response["Error"]["Code"], exc.value.response["Error"]["Message"]


def test_describe_table_shows_the_vector_indexes(fake: FakeDynamoVectors) -> None:
    c = client(fake)
    t = make_table(c)
    [ix] = c.describe_table(TableName=t)["Table"]["VectorIndexes"]
    assert ix["IndexName"] == "vix" and ix["IndexStatus"] == "ACTIVE"
    assert ix["Dimensions"] == DIM and ix["DistanceFunction"] == "COSINE"
    assert ix["IndexArn"].endswith(f":table/{t}/index/vix")
    assert {"AttributeName": "pk", "SearchSchemaElementType": "HASH"} in ix["SearchSchema"]


def test_vector_indexes_only_on_on_demand_tables(fake: FakeDynamoVectors) -> None:
    c = client(fake)
    with pytest.raises(ClientError) as exc:
        make_table(c, billing="PROVISIONED")
    assert error(exc)[0] == "ValidationException"
    assert "on-demand" in error(exc)[1]
    t = make_table(c)
    with pytest.raises(ClientError) as exc:
        c.update_table(
            TableName=t,
            BillingMode="PROVISIONED",
            ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        )
    assert error(exc)[0] == "ValidationException"


def test_search_schema_attributes_must_be_defined(fake: FakeDynamoVectors) -> None:
    with pytest.raises(ClientError) as exc:
        make_table(client(fake), index_spec(filters=("undeclared",)))
    assert error(exc) == (
        "ValidationException",
        "One element in SearchSchema is not defined in attribute definitions",
    )


def test_exact_cosine_distances_over_the_partition_only(fake: FakeDynamoVectors) -> None:
    c = client(fake)
    t = make_table(c)
    vectors = {1: (1, 0, 0), 2: (1, 1, 0), 3: (0, 1, 0), 4: (-1, 0.2, 0)}
    for i, v in vectors.items():
        put(c, t, "a", i, vec(*v), state="live")
    put(c, t, "b", 9, vec(1, 0, 0), state="live")  # another partition: never found
    resp = search(c, t, [2.0, 0.0, 0.0])
    assert ids(resp) == [1, 2, 3, 4]
    for r in resp["SearchResults"]:
        v = vectors[int(r["Item"]["id"]["N"])]
        cos = v[0] / math.sqrt(sum(x * x for x in v))
        assert r["Score"] == pytest.approx(1 - cos, abs=1e-6)
    assert ids(search(c, t, [1, 0, 0], k=2)) == [1, 2]
    # KEYS_ONLY: keys and the search schema, never the vector unless asked
    assert set(resp["SearchResults"][0]["Item"]) == {"pk", "id", "state"}


def test_euclidean_and_dot_product(fake: FakeDynamoVectors) -> None:
    c = client(fake)
    t = make_table(
        c, index_spec("dot", distance="DOT_PRODUCT"), index_spec("euc", distance="EUCLIDEAN")
    )
    put(c, t, "a", 1, vec(1, 0, 0), state="x")
    put(c, t, "a", 2, vec(3, 0, 0), state="x")
    dot = search(c, t, [1, 0, 0], index="dot")
    assert ids(dot) == [2, 1] and [r["Score"] for r in dot["SearchResults"]] == [3.0, 1.0]
    euc = search(c, t, [1, 0, 0], index="euc")
    assert ids(euc) == [1, 2] and [r["Score"] for r in euc["SearchResults"]] == [0.0, 2.0]


def test_inline_filter_is_equality_on_the_search_schema(fake: FakeDynamoVectors) -> None:
    c = client(fake)
    t = make_table(c)
    put(c, t, "a", 1, vec(1, 0, 0), state="live")
    put(c, t, "a", 2, vec(1, 0, 0), state="gone")
    live = search(
        c,
        t,
        [1, 0, 0],
        cond="pk = :p AND #s = :s",
        values={":p": {"S": "a"}, ":s": {"S": "live"}},
        ExpressionAttributeNames={"#s": "state"},
    )
    assert ids(live) == [1]
    for cond, values in [
        ("pk = :p AND #s <> :s", {":p": {"S": "a"}, ":s": {"S": "live"}}),
        ("pk = :p AND begins_with(#s, :s)", {":p": {"S": "a"}, ":s": {"S": "l"}}),
        ("pk = :p AND #s IN (:s)", {":p": {"S": "a"}, ":s": {"S": "live"}}),
    ]:
        with pytest.raises(ClientError) as exc:
            search(
                c, t, [1, 0, 0], cond=cond, values=values, ExpressionAttributeNames={"#s": "state"}
            )
        assert error(exc) == (
            "ValidationException",
            "Invalid comparator used in SearchConditionExpression",
        )
    with pytest.raises(ClientError) as exc:  # not in the search schema
        search(
            c, t, [1, 0, 0], cond="pk = :p AND id = :i", values={":p": {"S": "a"}, ":i": {"N": "1"}}
        )
    assert error(exc)[0] == "ValidationException" and "SearchSchema" in error(exc)[1]
    with pytest.raises(ClientError) as exc:  # the HASH attribute is required
        search(
            c,
            t,
            [1, 0, 0],
            cond="#s = :s",
            values={":s": {"S": "live"}},
            ExpressionAttributeNames={"#s": "state"},
        )
    assert error(exc) == (
        "ValidationException",
        "SearchConditionExpression must be provided when SearchSchema has a HASH key",
    )


def test_top_k_range_and_dimensions_and_unknown_index(fake: FakeDynamoVectors) -> None:
    c = client(fake)
    t = make_table(c)
    put(c, t, "a", 1, vec(1, 0, 0), state="live")
    with pytest.raises(ClientError) as exc:  # 0 the SDK refuses itself (its model's minimum)
        search(c, t, [1, 0, 0], k=101)
    assert error(exc) == ("ValidationException", "Provided TopK value is out of valid range")
    assert ids(search(c, t, [1, 0, 0], k=100)) == [1]
    with pytest.raises(ClientError) as exc:
        search(c, t, [1, 0])
    assert error(exc)[0] == "ValidationException" and "dimensions" in error(exc)[1]
    with pytest.raises(ClientError) as exc:
        search(c, t, [1, 0, 0], index="nope")
    assert error(exc)[0] == "ResourceNotFoundException"


def test_a_write_with_a_wrong_vector_is_refused_and_writes_nothing(fake: FakeDynamoVectors) -> None:
    c = client(fake)
    t = make_table(c)
    for bad in (vec(1, 0), {"S": "1,0,0"}, {"L": [{"N": "1"}, {"S": "x"}, {"N": "0"}]}):
        with pytest.raises(ClientError) as exc:
            put(c, t, "a", 1, bad)
        assert error(exc)[0] == "ValidationException"
        assert "Item" not in c.get_item(TableName=t, Key={"pk": {"S": "a"}, "id": {"N": "1"}})
    with pytest.raises(ClientError):
        c.update_item(
            TableName=t,
            Key={"pk": {"S": "a"}, "id": {"N": "2"}},
            UpdateExpression="SET #v = :v",
            ExpressionAttributeNames={"#v": "vec"},
            ExpressionAttributeValues={":v": vec(1, 2)},
        )
    assert "Item" not in c.get_item(TableName=t, Key={"pk": {"S": "a"}, "id": {"N": "2"}})
    with pytest.raises(ClientError):
        c.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": t,
                        "Item": {"pk": {"S": "a"}, "id": {"N": "3"}, "vec": vec(1)},
                    }
                }
            ]
        )
    assert "Item" not in c.get_item(TableName=t, Key={"pk": {"S": "a"}, "id": {"N": "3"}})


def test_items_without_a_vector_or_the_hash_attribute_are_not_indexed(
    fake: FakeDynamoVectors,
) -> None:
    c = client(fake)
    spec = index_spec()
    spec["SearchSchema"][0]["AttributeName"] = "state"  # HASH on a non-key attribute
    spec["SearchSchema"] = spec["SearchSchema"][:1]
    t = make_table(c, spec)
    put(c, t, "a", 1, vec(1, 0, 0), state="s")
    put(c, t, "a", 2, vec(1, 0, 0))  # no HASH attribute
    put(c, t, "a", 3, None, state="s")  # no vector
    assert ids(
        search(
            c,
            t,
            [1, 0, 0],
            cond="#s = :s",
            values={":s": {"S": "s"}},
            ExpressionAttributeNames={"#s": "state"},
        )
    ) == [1]
    assert fake.indexed(t, "vix") == 1


def test_the_index_follows_the_table_after_the_lag(fake: FakeDynamoVectors) -> None:
    c = client(fake)
    t = make_table(c)
    fake.lag_s = 0.4
    put(c, t, "a", 1, vec(1, 0, 0), state="live")
    assert ids(search(c, t, [1, 0, 0])) == []  # written, not yet replicated
    assert fake.pending() == 1
    time.sleep(0.5)
    assert ids(search(c, t, [1, 0, 0])) == [1]
    # An update of an indexed attribute, then the delete: each after the lag.
    c.update_item(
        TableName=t,
        Key={"pk": {"S": "a"}, "id": {"N": "1"}},
        UpdateExpression="SET #s = :s",
        ExpressionAttributeNames={"#s": "state"},
        ExpressionAttributeValues={":s": {"S": "gone"}},
    )
    live = {
        "cond": "pk = :p AND #s = :s",
        "values": {":p": {"S": "a"}, ":s": {"S": "live"}},
        "ExpressionAttributeNames": {"#s": "state"},
    }
    assert ids(search(c, t, [1, 0, 0], **live)) == [1]  # the old state, still
    fake.flush()
    assert ids(search(c, t, [1, 0, 0], **live)) == []
    c.delete_item(TableName=t, Key={"pk": {"S": "a"}, "id": {"N": "1"}})
    assert ids(search(c, t, [1, 0, 0])) == [1]
    fake.flush()
    assert ids(search(c, t, [1, 0, 0])) == []


def test_consumed_capacity_reports_vector_bytes(fake: FakeDynamoVectors) -> None:
    c = client(fake)
    t = make_table(c)
    resp = put(c, t, "a", 1, vec(1, 0, 0), state="live")
    written = resp["ConsumedCapacity"]["VectorIndexes"]["vix"]["VectorWriteRequestBytes"]
    assert written >= 4 * DIM
    # A write that changes no indexed attribute costs no vector bytes.
    resp = c.update_item(
        TableName=t,
        Key={"pk": {"S": "a"}, "id": {"N": "1"}},
        UpdateExpression="SET note = :o",
        ExpressionAttributeValues={":o": {"S": "x"}},
        ReturnConsumedCapacity="INDEXES",
    )
    assert "VectorIndexes" not in resp["ConsumedCapacity"]
    one = search(c, t, [1, 0, 0], ReturnConsumedCapacity="TOTAL")["ConsumedCapacity"]
    for i in range(2, 12):
        put(c, t, "a", i, vec(0, 1, 0), state="live")
    many = search(c, t, [1, 0, 0], k=1, ReturnConsumedCapacity="TOTAL")["ConsumedCapacity"]
    assert (
        many["VectorSearchRequestBytes"] > one["VectorSearchRequestBytes"]
    )  # grows with the partition
    assert "ConsumedCapacity" not in search(c, t, [1, 0, 0])
    assert fake.search_bytes >= one["VectorSearchRequestBytes"] + many["VectorSearchRequestBytes"]


def test_an_index_added_later_backfills_and_refuses_searches_until_done(
    fake: FakeDynamoVectors,
) -> None:
    c = client(fake)
    t = make_table(c)
    put(c, t, "a", 1, vec(1, 0, 0), state="live")
    fake.backfill_s = 0.4
    c.update_table(
        TableName=t, VectorIndexUpdates=[{"Create": index_spec("late", distance="DOT_PRODUCT")}]
    )
    desc = {ix["IndexName"]: ix for ix in c.describe_table(TableName=t)["Table"]["VectorIndexes"]}
    assert desc["late"].get("Backfilling") is True
    with pytest.raises(ClientError) as exc:
        search(c, t, [1, 0, 0], index="late")
    assert error(exc)[0] == "ValidationException" and "backfilling" in error(exc)[1]
    time.sleep(0.5)
    assert ids(search(c, t, [1, 0, 0], index="late")) == [1]


def test_projection_expression_names_projected_attributes_only(fake: FakeDynamoVectors) -> None:
    c = client(fake)
    t = make_table(c)
    put(c, t, "a", 1, vec(1, 0, 0), state="live", note="n")
    [hit] = search(c, t, [1, 0, 0], ProjectionExpression="id, vec")["SearchResults"]
    assert set(hit["Item"]) == {"id", "vec"}
    with pytest.raises(ClientError) as exc:
        search(c, t, [1, 0, 0], ProjectionExpression="id, note")
    assert error(exc)[0] == "ValidationException"


def test_throttled_search_is_retried_by_the_sdk(fake: FakeDynamoVectors) -> None:
    from fakes.vector_rules import DynamoError

    c = client(fake)
    t = make_table(c)
    put(c, t, "a", 1, vec(1, 0, 0), state="live")
    fake.reset_meters()
    fake.faults.add(DynamoError("ThrottlingException", "Rate exceeded"), stage="SearchVectors")
    assert ids(search(c, t, [1, 0, 0])) == [1]
    assert fake.ops["SearchVectors"] == 2
