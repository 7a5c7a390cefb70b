import { afterEach, beforeEach, expect, test } from '@jest/globals'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { run } from '../../../src/cli/main.js'

/**
 * A machine with no AWS set up, as a newcomer's is: no region, no credentials. The AWS SDK's own
 * words ("Region is missing", "Could not load credentials from any providers") name nothing to
 * set; the CLI's say what to set, DynamoDB Local's dummy credentials included. Nothing reaches a
 * server: the SDK refuses before it sends.
 */

const cli = async (...argv: string[]): Promise<{ code: number, out: string, err: string }> => {
  let out = ''
  let err = ''
  const code = await run(argv, { out: (text) => { out += `${text}\n` }, err: (text) => { err += `${text}\n` } })
  return { code, out, err }
}

const AWS_VARIABLES = ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_ENDPOINT_URL_DYNAMODB']
const savedEnv = { ...process.env }
beforeEach(() => {
  for (const name of AWS_VARIABLES) Reflect.deleteProperty(process.env, name)
  const nowhere = join(tmpdir(), `no-aws-config-${process.pid}`)
  Object.assign(process.env, {
    // No shared config or credentials file, whatever the machine has.
    AWS_CONFIG_FILE: nowhere,
    AWS_SHARED_CREDENTIALS_FILE: nowhere,
    // Not on EC2: the instance metadata endpoint would only add its timeouts before the same refusal.
    AWS_EC2_METADATA_DISABLED: 'true',
    // Where a newcomer points the CLI: DynamoDB Local (nothing listens; no request is sent).
    AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:1'
  })
})
afterEach(() => { process.env = { ...savedEnv } })

test('no region: says to set AWS_REGION, and that any region does for DynamoDB Local (exit 2)', async () => {
  const { code, err } = await cli('list', '--table', 'IdempotencyStore')
  expect(code).toBe(2)
  expect(err).toMatch(/^middy-idempotency list: no AWS region: set AWS_REGION \(for example AWS_REGION=us-east-1\) or a region in your AWS profile\. With DynamoDB Local \(AWS_ENDPOINT_URL_DYNAMODB\) any region will do/)
})

test('no credentials: says what to set, and the dummy ones DynamoDB Local takes (exit 2)', async () => {
  process.env.AWS_REGION = 'us-east-1'
  const { code, err } = await cli('inspect', 'orders#k', '--table', 'IdempotencyStore')
  expect(code).toBe(2)
  expect(err).toMatch(/^middy-idempotency inspect: no AWS credentials: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY\. DynamoDB Local \(AWS_ENDPOINT_URL_DYNAMODB\) takes any: AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local/)
})

test('create-table says the same', async () => {
  const { code, err } = await cli('create-table', '--table', 'IdempotencyStore')
  expect(code).toBe(2)
  expect(err).toMatch(/^middy-idempotency create-table: no AWS region: set AWS_REGION/)
})
