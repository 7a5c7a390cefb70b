#!/usr/bin/env sh
# Creates the idempotency table with the AWS CLI, when it is not deployed with template.yaml.
#   ./create-table.sh [table-name]      (region and credentials as the AWS CLI finds them)
# Against DynamoDB Local: AWS_ENDPOINT_URL=http://127.0.0.1:8000 ./create-table.sh
set -eu

TABLE="${1:-IdempotencyStore}"

# Partition key only, of type S; on-demand capacity, so there is nothing to size.
aws dynamodb create-table \
  --table-name "$TABLE" \
  --attribute-definitions AttributeName=idempotencyKey,AttributeType=S \
  --key-schema AttributeName=idempotencyKey,KeyType=HASH \
  --billing-mode PAY_PER_REQUEST \
  --query TableDescription.TableStatus --output text

# TTL can only be switched on once the table is ACTIVE.
aws dynamodb wait table-exists --table-name "$TABLE"

# Expired records (the `expiry` attribute, epoch seconds) are then deleted by DynamoDB.
aws dynamodb update-time-to-live \
  --table-name "$TABLE" \
  --time-to-live-specification "Enabled=true, AttributeName=expiry" \
  --query TimeToLiveSpecification --output text

echo "table $TABLE is ready"
