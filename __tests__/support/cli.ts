import { afterAll, beforeAll } from '@jest/globals'
import { createClient } from 'redis'
import { run } from '../../src/cli/main.js'
import type { IdempotencyStore } from '../../src/index.js'
import { RedisStore } from '../../src/redis.js'
import { endpoint, freshTable } from './dynamodb.js'
import { redisUrl, uniquePrefix } from './redis.js'

/** What one run of the CLI in this process printed, and its exit code; `asked`: the y/N questions it put. */
export interface CliRun { code: number, out: string, err: string, asked: string[] }

/**
 * The CLI in this process. `answer` plays a person at a terminal, answering each y/N question
 * (undefined: the CLI is not at a terminal).
 */
export const runCli = async (argv: string[], answer?: (question: string) => Promise<boolean>): Promise<CliRun> => {
  let out = ''
  let err = ''
  const asked: string[] = []
  const code = await run(argv, {
    out: (text) => { out += `${text}\n` },
    err: (text) => { err += `${text}\n` },
    ...(answer === undefined ? {} : { confirm: async (question: string) => { asked.push(question); return await answer(question) } })
  })
  return { code, out, err, asked }
}

/** Region, credentials and DynamoDB Local's endpoint as the CLI's AWS SDK reads them, for the file's tests. */
export const useLocalAwsEnvironment = (): void => {
  const saved = { ...process.env }
  beforeAll(() => {
    Object.assign(process.env, { AWS_ENDPOINT_URL_DYNAMODB: endpoint(), AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' })
  })
  afterAll(() => { process.env = { ...saved } })
}

/** A store the CLI is pointed at by `flags`: a fresh DynamoDB Local table, or a prefix of redis-server. */
export interface CliTarget { flags: string[], store: IdempotencyStore, close: () => Promise<void> }

export const dynamodbTarget = async (): Promise<CliTarget> => {
  const table = await freshTable()
  return { flags: ['--table', table.tableName], store: table.store, close: table.drop }
}

export const redisTarget = async (name: string): Promise<CliTarget> => {
  const client = await createClient({ url: redisUrl() }).connect()
  const keyPrefix = uniquePrefix(name)
  return {
    flags: ['--redis', redisUrl(), '--prefix', keyPrefix],
    store: new RedisStore({ client, keyPrefix }),
    close: async () => { await client.close() }
  }
}
