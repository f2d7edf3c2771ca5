"""The record store on DynamoDB."""
