/**
 * What a function deploys with the `@aws-lite/client` variant of the README's SQS consumer (and
 * what the bench bundles): the client made at init, with no `@aws-lite/dynamodb` plugin, since the
 * store uses the client's raw request call (docs/stores.md, "A client without the SDK"). Its bundle
 * imports no AWS SDK module.
 */
import awsLite from '@aws-lite/client'
import type { DynamoDBAwsLiteClient } from '../../src/dynamodb.js'
import { createOursLiteHandler } from './ours-lite-create.js'

// As on Lambda: the region and credentials come from the environment.
const client = await awsLite({ region: process.env.AWS_REGION ?? 'us-east-1' }) as unknown as DynamoDBAwsLiteClient
export const handler = createOursLiteHandler({ tableName: process.env.IDEMPOTENCY_TABLE ?? 'IdempotencyStore', client })
