"""Administration of the DynamoDB tables: where they are (``configure_tables``),
creating and dropping them, and the CloudFormation properties the models
imply (``table_definitions``, which template.yaml is checked against)."""

from __future__ import annotations

from typing import Any

from pynamodb.constants import PAY_PER_REQUEST_BILLING_MODE

from .client import drop_clients
from .tables import ALL_MODELS, DEFAULT_REGION, short_name


def configure_tables(prefix: str, endpoint: str, region: str) -> None:
    """Point every model at ``<prefix><short name>`` on ``endpoint`` (empty:
    the AWS endpoint of ``region``). Can be called again: cached connections
    are dropped."""
    for model in ALL_MODELS:
        model.Meta.table_name = prefix + short_name(model)
        model.Meta.host = endpoint or None
        model.Meta.region = region or DEFAULT_REGION
        model._connection = None
    drop_clients()


def create_tables(wait: bool = True) -> list[str]:
    """Create the tables that do not exist yet (on-demand billing). Returns
    the names of the tables it created."""
    created: list[str] = []
    for model in ALL_MODELS:
        if model.exists():
            continue
        model.create_table(
            wait=wait,
            billing_mode=PAY_PER_REQUEST_BILLING_MODE,
            ignore_update_ttl_errors=True,
        )
        created.append(model.Meta.table_name)
    return created


def create_vector_indexes(dimension: int) -> list[str]:
    """VectorStore=dynamodb outside CloudFormation (the local stack, tests):
    add the vector indexes of ``dynamodb/vectors.py`` the tables lack,
    one UpdateTable each (DynamoDB adds one vector index per call)."""
    from .vectors import filter_definitions, index_specs

    models = {short_name(m): m for m in ALL_MODELS}
    extra = filter_definitions()
    created: list[str] = []
    for short, specs in index_specs(dimension).items():
        model = models[short]
        client: Any = model._get_connection().connection.client
        table = model.Meta.table_name
        have = {
            ix["IndexName"]
            for ix in client.describe_table(TableName=table)["Table"].get("VectorIndexes", [])
        }
        for spec in specs:
            if spec["IndexName"] in have:
                continue
            client.update_table(
                TableName=table,
                AttributeDefinitions=extra.get(short, [])
                or [{"AttributeName": "pk", "AttributeType": "S"}],
                VectorIndexUpdates=[{"Create": spec}],
            )
            created.append(f"{table}/{spec['IndexName']}")
    return created


def delete_tables() -> None:
    """Drop every table (tests and the local server's reset only)."""
    for model in ALL_MODELS:
        if model.exists():
            model.delete_table()


def _keys(key_schema: Any) -> list[dict[str, str]]:
    keys = [{"AttributeName": k["AttributeName"], "KeyType": k["KeyType"]} for k in key_schema]
    return sorted(keys, key=lambda k: k["KeyType"])  # HASH before RANGE


def table_definitions() -> dict[str, dict[str, Any]]:
    """Per short name, the CloudFormation ``AWS::DynamoDB::Table`` properties
    the models imply (KeySchema, AttributeDefinitions, BillingMode, and when
    present GlobalSecondaryIndexes and TimeToLiveSpecification), for
    template.yaml to be checked against."""
    out: dict[str, dict[str, Any]] = {}
    for model in ALL_MODELS:
        schema = model._get_schema()
        props: dict[str, Any] = {
            "BillingMode": PAY_PER_REQUEST_BILLING_MODE,
            "AttributeDefinitions": sorted(
                (
                    {"AttributeName": a["AttributeName"], "AttributeType": a["AttributeType"]}
                    for a in schema["attribute_definitions"]
                ),
                key=lambda a: a["AttributeName"],
            ),
            "KeySchema": _keys(schema["key_schema"]),
        }
        gsis = [
            {
                "IndexName": g["index_name"],
                "KeySchema": _keys(g["key_schema"]),
                "Projection": dict(g["projection"]),
            }
            for g in schema["global_secondary_indexes"]
        ]
        if gsis:
            props["GlobalSecondaryIndexes"] = sorted(gsis, key=lambda g: g["IndexName"])
        ttl = model._ttl_attribute()
        if ttl is not None:
            props["TimeToLiveSpecification"] = {"AttributeName": ttl.attr_name, "Enabled": True}
        out[short_name(model)] = props
    return out
