/**
 * Type tests, compiled by `npm run typecheck` (never run): with `idempotency` in the stack, a
 * whole-event handler's `context.idempotency` is typed, on Middy 7, 6 and 5, with no cast. It is
 * optional, as at run time: absent for a request that runs unprotected (a GET without an
 * `Idempotency-Key`) and for a batch.
 */
import middy7 from '@middy/core'
import httpErrorHandler from '@middy/http-error-handler'
import middy5Module from 'middy-core-5'
import middy6Module from 'middy-core-6'
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda'
import { idempotency, MemoryStore, type IdempotencyContext } from '../../src/index.js'

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
/** Compiles only when `T` is `true`. */
const assertType = <T extends true>(): T | undefined => undefined

const middy5 = middy5Module as unknown as typeof middy7
const middy6 = middy6Module as unknown as typeof middy7
const store = new MemoryStore()

for (const middy of [middy7, middy6, middy5]) {
  middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>()
    .use(httpErrorHandler())
    .use(idempotency({ store }))
    .handler(async (event, context) => {
      assertType<Equals<typeof event, APIGatewayProxyEventV2>>()
      assertType<Equals<typeof context.idempotency, IdempotencyContext | undefined>>()
      const key: string | undefined = context.idempotency?.key
      context.idempotency?.transact({ Put: { TableName: 'Orders', Item: { id: key } } })
      // Still the Lambda context.
      assertType<Equals<typeof context.awsRequestId, string>>()
      return { statusCode: 201, body: JSON.stringify({ key }) }
    })
}

// Not `any`: each of these is refused.
middy6<APIGatewayProxyEventV2>().use(idempotency({ store })).handler(async (_event, context) => {
  // @ts-expect-error `idempotency` may be absent (a request that runs unprotected)
  context.idempotency.key.toString()
  // @ts-expect-error the key is a string
  const n: number | undefined = context.idempotency?.key
  // @ts-expect-error IdempotencyContext has no `lease`
  return context.idempotency?.lease ?? n
})
