"""Idempotency on DynamoDB (Powertools' DynamoDB persistence layer), for
responses of any size: DynamoDB refuses an item past 400 KB, and a record
that fails to save after the graph was written would make the retry write
everything again. A response past ``INLINE_MAX`` is stored zlib-compressed;
one still too large once compressed is stored by reference, in parts (items
of the same table, with the record's expiry), and the record keeps the
reference."""

from __future__ import annotations

import base64
import json
import time
import uuid
import zlib
from typing import Any

from ..dynamodb.batch import upstream
from ..errors import UpstreamError
from .runner import OwnedKeys, PowertoolsIdempotency

STORED = "__gb_stored__"  # the envelope key (no remember response has it)
INLINE_MAX = 64 * 1024  # bytes of JSON stored as they are
PART_BYTES = 256 * 1024  # compressed bytes per part item (items stop at 400 KB)


def pack(response: dict[str, Any], client: Any, table: str, ttl_s: int) -> dict[str, Any]:
    """What the record stores for ``response`` (see the module's doc)."""
    raw = json.dumps(response, separators=(",", ":")).encode()
    if len(raw) <= INLINE_MAX:
        return response
    packed = zlib.compress(raw, 6)
    if len(packed) <= PART_BYTES:
        return {STORED: {"z": base64.b64encode(packed).decode()}}
    ref = uuid.uuid4().hex
    expires = int(time.time()) + ttl_s
    parts = [packed[i : i + PART_BYTES] for i in range(0, len(packed), PART_BYTES)]
    for i, part in enumerate(parts):
        client.put_item(
            TableName=table,
            Item={
                "id": {"S": f"gb-part#{ref}#{i}"},
                "data": {"B": part},
                "expiration": {"N": str(expires)},
            },
        )
    return {STORED: {"ref": ref, "parts": len(parts)}}


def unpack(stored: dict[str, Any], client: Any, table: str) -> dict[str, Any]:
    envelope = stored.get(STORED)
    if not isinstance(envelope, dict):
        return stored
    if "z" in envelope:
        packed = base64.b64decode(envelope["z"])
    else:
        chunks = []
        for i in range(int(envelope["parts"])):
            item = client.get_item(
                TableName=table,
                Key={"id": {"S": f"gb-part#{envelope['ref']}#{i}"}},
                ConsistentRead=True,
            ).get("Item")
            if item is None:
                raise UpstreamError("the idempotency store lost part of a stored response")
            chunks.append(item["data"]["B"])
        packed = b"".join(chunks)
    result: dict[str, Any] = json.loads(zlib.decompress(packed))
    return result


class PartedResponses:
    """``pack`` and ``unpack`` on one table: the Responses of the runner."""

    def __init__(self, client: Any, table: str, ttl_s: int) -> None:
        self.client, self.table, self.ttl_s = client, table, ttl_s

    def pack(self, response: dict[str, Any]) -> dict[str, Any]:
        return pack(response, self.client, self.table, self.ttl_s)

    def unpack(self, stored: dict[str, Any]) -> dict[str, Any]:
        return unpack(stored, self.client, self.table)


def owned_layer(client: Any, table: str) -> Any:
    """Powertools' DynamoDB layer whose keys say whose they are, and whose
    records carry their ``owner`` (the ``by_owner`` index: an erase finds
    them with a Query)."""
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

    class Owned(OwnedKeys, DynamoDBPersistenceLayer):
        def _put_record(self, data_record: Any) -> None:
            super()._put_record(data_record)
            # Set as the record is taken, before any response is in it (a
            # crash between the two leaves an empty record, which expires).
            owner = owner_of(data_record.idempotency_key)
            if owner:
                client.update_item(
                    TableName=table,
                    Key={"id": {"S": data_record.idempotency_key}},
                    UpdateExpression="SET #owner = :owner",
                    ExpressionAttributeNames={"#owner": "owner"},
                    ExpressionAttributeValues={":owner": {"S": owner}},
                )

        def forget_owner(self, owner: str) -> int:
            return forget_owner(client, table, owner)

    return Owned(table_name=table, boto3_client=client)


def owner_of(key: str) -> str | None:
    """The owner part of a key ``<function>#<owner>#<hash>``."""
    parts = key.split("#")
    return parts[-2] if len(parts) >= 3 else None


@upstream("idempotency forget_user")
def forget_owner(client: Any, table: str, owner: str) -> int:
    """Delete the user's records, and the parts of a response stored by
    reference."""
    found = 0
    kwargs: dict[str, Any] = {
        "TableName": table,
        "IndexName": "by_owner",
        "KeyConditionExpression": "#owner = :owner",
        "ExpressionAttributeNames": {"#owner": "owner"},
        "ExpressionAttributeValues": {":owner": {"S": owner}},
    }
    while True:
        page = client.query(**kwargs)
        for item in page.get("Items", []):
            key = {"id": item["id"]}
            record = client.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
            for part in _parts(record or {}):
                client.delete_item(TableName=table, Key={"id": {"S": part}})
            client.delete_item(TableName=table, Key=key)
            found += 1
        if "LastEvaluatedKey" not in page:
            return found
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _parts(item: dict[str, Any]) -> list[str]:
    """The part items of a record's response stored by reference."""
    try:
        envelope = json.loads(item["data"]["S"]).get(STORED)
    except (KeyError, TypeError, ValueError, AttributeError):
        return []
    if not isinstance(envelope, dict) or "ref" not in envelope:
        return []
    return [f"gb-part#{envelope['ref']}#{i}" for i in range(int(envelope["parts"]))]


def dynamodb_idempotency(client: Any, table: str, ttl_s: int) -> PowertoolsIdempotency:
    """Idempotency records in ``table`` (the stack's idempotency table), through
    ``client``: the botocore client the table models share (a client of its own
    would load botocore's session and service model a second time, 0.1-0.2 s of
    a cold start)."""
    store = owned_layer(client, table)
    return PowertoolsIdempotency(store, ttl_s, PartedResponses(client, table, ttl_s))
