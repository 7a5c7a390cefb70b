/**
 * The side-by-side batch benchmark: for each batch size and workload, rounds alternate
 * ours, ours-lite, theirs, ours, ours-lite, theirs ... against the same DynamoDB Local, each round on fresh
 * tables. Setup deliveries (the originals of a redelivery) are neither timed nor counted.
 */
import awsLite from '@aws-lite/client'
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { Context, SQSEvent } from 'aws-lambda'
import { performance } from 'node:perf_hooks'
import { localClientConfig } from '../../scripts/dynamodb-local.mjs'
import type { DynamoDBAwsLiteClient } from '../../src/dynamodb.js'
import { createOursLiteHandler } from '../handlers/ours-lite-create.js'
import { createOursHandler } from '../handlers/ours.js'
import { createTheirsHandler } from '../handlers/theirs.js'
import { workCounter } from '../handlers/work.js'
import { lambdaContext, roundOf, type Workload } from './events.js'
import { instrumentAwsLite } from './instrument-aws-lite.js'
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
  meter: Meter
  create: (tableName: string, keyOnBody: boolean) => Invoke
  /** Closes the client's sockets. */
  destroy: () => void
}

/** An `@aws-lite/client` for `endpoint` (DynamoDB Local takes any credentials), with its defaults otherwise. */
const awsLiteClient = async (endpoint: string): Promise<DynamoDBAwsLiteClient> =>
  await awsLite({ region: 'us-east-1', accessKeyId: 'local', secretAccessKey: 'local', endpoint }) as unknown as DynamoDBAwsLiteClient

/** Ours on the SDK, ours on `@aws-lite/client`, Powertools: each with a client of its own, instrumented. */
export const contenders = async (endpoint: string): Promise<Contender[]> => {
  const sdk = (implementation: Implementation, create: (client: DynamoDBClient, tableName: string, keyOnBody: boolean) => Invoke): Contender => {
    const client = new DynamoDBClient(localClientConfig(endpoint))
    return { implementation, meter: instrument(client), create: (tableName, keyOnBody) => create(client, tableName, keyOnBody), destroy: () => { client.destroy() } }
  }
  const lite = instrumentAwsLite(await awsLiteClient(endpoint))
  return [
    sdk('ours', (client, tableName, keyOnBody) => createOursHandler({ tableName, client, keyOnBody }) as unknown as Invoke),
    {
      implementation: 'ours-lite',
      meter: lite.meter,
      create: (tableName, keyOnBody) => createOursLiteHandler({ tableName, client: lite.client, keyOnBody }) as unknown as Invoke,
      // Its keep-alive sockets close with the server (DynamoDB Local or the proxy) at the end of the section.
      destroy: () => {}
    },
    sdk('theirs', (client, tableName, keyOnBody) => createTheirsHandler({ tableName, client, keyOnBody }) as Invoke)
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
