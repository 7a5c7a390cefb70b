/**
 * The same consumer on Powertools for AWS Lambda (TypeScript) with its cache store
 * (`CachePersistenceLayer`, for Valkey and Redis OSS) and a node-redis client, as its
 * documentation shows it; per record exactly as `theirs.ts` does on DynamoDB: `makeIdempotent`
 * around the record handler, `BatchProcessor` + `processPartialResponse`, and
 * `registerLambdaContext` on every invocation. `handler`'s client is created, not connected,
 * as in `ours-redis.ts`.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch'
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency'
import { CachePersistenceLayer } from '@aws-lambda-powertools/idempotency/cache'
import type { CacheClient } from '@aws-lambda-powertools/idempotency/cache/types'
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda'
import { createClient } from 'redis'
import { work } from './work.js'

export const createTheirsRedisHandler = ({ client }: { client: CacheClient }) => {
  const processor = new BatchProcessor(EventType.SQS)
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'messageId' })
  const recordHandler = makeIdempotent(async (record: SQSRecord) => await work(record), {
    persistenceStore: new CachePersistenceLayer({ client }),
    config
  })
  return async (event: SQSEvent, context: Context) => {
    config.registerLambdaContext(context)
    return await processPartialResponse(event, recordHandler, processor, { context })
  }
}

export const handler = createTheirsRedisHandler({ client: createClient({ url: process.env.REDIS_URL }) })
