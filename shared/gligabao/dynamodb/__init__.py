"""What every DynamoDB user shares: client, table declarations, batch paging, admin."""
