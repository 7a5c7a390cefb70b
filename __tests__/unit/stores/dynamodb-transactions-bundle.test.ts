/**
 * `transactions` is opt-in so that a handler that never transacts does not carry the DynamoDB
 * transaction writer: the README's first handler (bench/handlers/ours.ts), bundled as users
 * deploy it, holds neither transaction.ts nor the marshalling only it uses.
 */
import { expect, test } from '@jest/globals'
import { bundleEntry } from '../../../bench/lib/bundle.js'
import { fileURLToPath } from 'node:url'

const sourcesOf = async (handler: string): Promise<string[]> =>
  (await bundleEntry(`transactions-${handler}`, fileURLToPath(new URL(`../../../bench/handlers/${handler}.ts`, import.meta.url)))).sources.map((s) => s.path)

test('an SQS handler on a DynamoDBStore without transactions bundles no transaction writer; one that transacts does', async () => {
  const plain = await sourcesOf('ours')
  expect(plain).toContain('src/stores/dynamodb/dynamodb-store.ts')
  expect(plain).not.toContain('src/stores/dynamodb/transaction.ts')
  expect(plain).not.toContain('src/stores/dynamodb/marshal.ts')
  const transacting = await sourcesOf('transact-consumers')
  expect(transacting).toContain('src/stores/dynamodb/transaction.ts')
  expect(transacting).toContain('src/stores/dynamodb/marshal.ts')
})
