/**
 * The side-by-side batch benchmark: for each batch size and workload, rounds alternate
 * ours, theirs, ours, theirs ... against the same DynamoDB Local, each round on fresh
 * tables. Setup deliveries (the originals of a redelivery) are neither timed nor counted.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { Context, SQSEvent } from 'aws-lambda'
import { performance } from 'node:perf_hooks'
import { localClientConfig } from '../../scripts/dynamodb-local.mjs'
import { createOursHandler } from '../handlers/ours.js'
import { createTheirsHandler } from '../handlers/theirs.js'
import { workCounter } from '../handlers/work.js'
import { lambdaContext, roundOf, type Workload } from './events.js'
import { instrument, resetMeter, totalAttempts, type Meter } from './instrument.js'
import { createTableFor, dropTable, type Implementation } from './tables.js'

type Invoke = (event: SQSEvent, context: Context) => Promise<unknown>

/** What one implementation did in one timed batch. */
export interface Sample {
  ms: number
  records: number
  attempts: Record<string, number>
  maxInFlight: number
  writeUnits: number
  readUnits: number
  /** Part of writeUnits computed by rule (refused conditional writes). */
  computedWriteUnits: number
  /** Records reported in batchItemFailures. */
  failed: number
  /** Times the business function ran. */
  runs: number
  /** CPU time of this Node process (user + system) during the batch: the client-side cost, whatever DynamoDB Local's speed. */
  cpuMs: number
}

export interface Contender {
  implementation: Implementation
  client: DynamoDBClient
  meter: Meter
  create: (tableName: string, keyOnBody: boolean) => Invoke
}

export const contenders = (endpoint: string): Contender[] => {
  const make = (implementation: Implementation, create: Contender['create'], client: DynamoDBClient): Contender =>
    ({ implementation, client, meter: instrument(client), create })
  const oursClient = new DynamoDBClient(localClientConfig(endpoint))
  const theirsClient = new DynamoDBClient(localClientConfig(endpoint))
  return [
    make('ours', (tableName, keyOnBody) => createOursHandler({ tableName, client: oursClient, keyOnBody }) as unknown as Invoke, oursClient),
    make('theirs', (tableName, keyOnBody) => createTheirsHandler({ tableName, client: theirsClient, keyOnBody }) as Invoke, theirsClient)
  ]
}

const failedCount = (response: unknown): number =>
  ((response as { batchItemFailures?: unknown[] } | undefined)?.batchItemFailures ?? []).length

/**
 * One round of one workload for one contender, on a table of its own. `warm`: the handler first
 * takes an untimed batch of one new record of its own, as a warm function has (ours' store
 * checks its table once, before its first claim: a request a warm function no longer sends).
 */
export const runRound = async (admin: DynamoDBClient, contender: Contender, workload: Workload, size: number, { warm = false } = {}): Promise<Sample> => {
  const round = roundOf(workload, size)
  const tableName = await createTableFor(admin, contender.implementation)
  try {
    const invoke = contender.create(tableName, round.keyOnBody)
    const context = lambdaContext(process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'bench')
    if (warm && failedCount(await invoke(roundOf('all new', 1).timed, context)) > 0) throw new Error(`${contender.implementation}: warm-up batch reported failures`)
    if (round.setup !== undefined) {
      const setupResponse = await invoke(round.setup, context)
      if (failedCount(setupResponse) > 0) throw new Error(`${contender.implementation}: setup batch of ${workload} reported failures`)
    }
    resetMeter(contender.meter)
    const runsBefore = workCounter.runs
    const cpuBefore = process.cpuUsage()
    const start = performance.now()
    const response = await invoke(round.timed, context)
    const ms = performance.now() - start
    const cpu = process.cpuUsage(cpuBefore)
    const meter = contender.meter
    return {
      ms,
      records: round.timed.Records.length,
      attempts: { ...meter.attempts },
      maxInFlight: meter.maxInFlight,
      writeUnits: meter.reported.write + meter.computed.write,
      readUnits: meter.reported.read + meter.computed.read,
      computedWriteUnits: meter.computed.write,
      failed: failedCount(response),
      runs: workCounter.runs - runsBefore,
      cpuMs: (cpu.user + cpu.system) / 1000
    }
  } finally {
    await dropTable(admin, tableName)
  }
}

export { totalAttempts }
