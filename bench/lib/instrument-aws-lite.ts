/**
 * The meter of `instrument.ts` for an `@aws-lite/client`: the client is a function, so it is
 * wrapped (keeping its `config`, by which the store recognises it). Each call is one request
 * counted, `ReturnConsumedCapacity: 'TOTAL'` is added, and a refused conditional write gets its
 * capacity by the documented rule, as for the SDK. Unlike the SDK's meter, a retry inside
 * `@aws-lite/client` (up to 5 by default) is not seen: a call is counted once.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb'
import type { DynamoDBAwsLiteClient } from '../../src/dynamodb.js'
import { capacityOfFailedWrite } from './capacity.js'
import { newMeter, READS, unitsOf, unreportedStatements, type Consumed, type Meter } from './instrument.js'

type Request = Parameters<DynamoDBAwsLiteClient>[0]

/** `client` wrapped so that it writes to the meter it returns. */
export const instrumentAwsLite = (client: DynamoDBAwsLiteClient): { client: DynamoDBAwsLiteClient, meter: Meter } => {
  const meter = newMeter()
  const counted = async (request: Request): Promise<unknown> => {
    const operation = String(request.headers?.['X-Amz-Target'] ?? 'Unknown').replace(/^DynamoDB_20120810\./, '')
    const payload = { ...request.payload, ReturnConsumedCapacity: 'TOTAL' } as Record<string, unknown>
    const bucket = READS.has(operation) ? 'read' : 'write'
    meter.attempts[operation] = (meter.attempts[operation] ?? 0) + 1
    meter.maxInFlight = Math.max(meter.maxInFlight, ++meter.inFlight)
    try {
      const result = await client({ ...request, payload }) as { payload?: { ConsumedCapacity?: Consumed } }
      const units = unitsOf(result.payload?.ConsumedCapacity)
      if (!unreportedStatements(meter, operation, units, payload.Statements) && units !== undefined) meter.reported[bucket] += units
      return result
    } catch (error) {
      const raw = error as { __type?: string, code?: string, Item?: Record<string, AttributeValue> }
      if (String(raw.__type ?? raw.code ?? '').endsWith('ConditionalCheckFailedException')) {
        meter.computed.write += capacityOfFailedWrite(payload.Item as Record<string, AttributeValue> | undefined, raw.Item)
        meter.computedOps[operation] = (meter.computedOps[operation] ?? 0) + 1
      }
      throw error
    } finally {
      meter.inFlight--
    }
  }
  return { client: Object.assign(counted, { config: (client as unknown as { config: object }).config }), meter }
}
