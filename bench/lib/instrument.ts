/**
 * Counts what an SDK client costs: every request attempt (retries included), the
 * requests in flight at once, and the capacity consumed. Added to the client's own
 * middleware stack, so both implementations are measured the same way without
 * knowing anything about them.
 */
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { capacityOfFailedWrite, capacityOfStatements } from './capacity.js'

export interface Meter {
  /** Request attempts, by operation (PutItem, UpdateItem, BatchGetItem ...). */
  attempts: Record<string, number>
  inFlight: number
  maxInFlight: number
  /** Capacity units DynamoDB Local reported in `ConsumedCapacity`. */
  reported: { read: number, write: number }
  /** Capacity computed from the documented rules where nothing was reported (failed conditional writes). */
  computed: { read: number, write: number }
  /** Which operations had to be computed, and how many times. */
  computedOps: Record<string, number>
  /**
   * Failed writes whose capacity is neither reported nor computed here, by operation: a
   * cancelled transaction (TransactionCanceledException carries no ConsumedCapacity).
   */
  unreportedOps: Record<string, number>
}

export const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan'])

export const newMeter = (): Meter => ({ attempts: {}, inFlight: 0, maxInFlight: 0, reported: { read: 0, write: 0 }, computed: { read: 0, write: 0 }, computedOps: {}, unreportedOps: {} })

export const resetMeter = (meter: Meter): void => { Object.assign(meter, newMeter()) }

export const totalAttempts = (meter: Meter): number => Object.values(meter.attempts).reduce((a, b) => a + b, 0)

export type Consumed = { CapacityUnits?: number } | Array<{ CapacityUnits?: number }> | undefined

export const unitsOf = (consumed: Consumed): number | undefined => {
  if (consumed === undefined) return undefined
  const list = Array.isArray(consumed) ? consumed : [consumed]
  return list.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0)
}

/**
 * A BatchExecuteStatement answered without capacity (DynamoDB Local's way): its write units
 * computed by rule, one statement at a time. True when it was one.
 */
export const unreportedStatements = (meter: Meter, operation: string, units: number | undefined, statements: unknown): boolean => {
  if (operation !== 'BatchExecuteStatement' || (units ?? 0) > 0) return false
  meter.computed.write += capacityOfStatements(statements as Parameters<typeof capacityOfStatements>[0])
  meter.computedOps[operation] = (meter.computedOps[operation] ?? 0) + 1
  return true
}

/** Instruments `client` and returns the meter it writes to. */
export const instrument = (client: DynamoDBClient): Meter => {
  const meter = newMeter()
  const commandOf = (context: { commandName?: string }): string => (context.commandName ?? 'Unknown').replace(/Command$/, '')

  // Initialize runs once per `send`: ask for capacity there, and read it from the final result.
  client.middlewareStack.add((next, context) => async (args) => {
    const operation = commandOf(context)
    const input = args.input as Record<string, unknown>
    input.ReturnConsumedCapacity = 'TOTAL'
    const bucket = READS.has(operation) ? 'read' : 'write'
    try {
      const result = await next(args)
      const units = unitsOf((result.output as { ConsumedCapacity?: Consumed }).ConsumedCapacity)
      if (!unreportedStatements(meter, operation, units, input.Statements) && units !== undefined) meter.reported[bucket] += units
      return result
    } catch (error) {
      // A refused conditional write still consumes write capacity, but the exception
      // carries no ConsumedCapacity (not from DynamoDB Local, not from DynamoDB): compute it.
      if ((error as { name?: string }).name === 'ConditionalCheckFailedException') {
        const existing = (error as { Item?: Record<string, AttributeValue> }).Item
        meter.computed.write += capacityOfFailedWrite(input.Item as Record<string, AttributeValue> | undefined, existing)
        meter.computedOps[operation] = (meter.computedOps[operation] ?? 0) + 1
      } else if ((error as { name?: string }).name === 'TransactionCanceledException') {
        meter.unreportedOps[operation] = (meter.unreportedOps[operation] ?? 0) + 1
      }
      throw error
    }
  }, { step: 'initialize', name: 'benchCapacity' })

  // Deserialize runs once per attempt (inside the retry middleware): count attempts there.
  client.middlewareStack.add((next, context) => async (args) => {
    const operation = commandOf(context)
    meter.attempts[operation] = (meter.attempts[operation] ?? 0) + 1
    meter.maxInFlight = Math.max(meter.maxInFlight, ++meter.inFlight)
    try {
      return await next(args)
    } finally {
      meter.inFlight--
    }
  }, { step: 'deserialize', name: 'benchAttempts' })

  return meter
}
