/**
 * An API Gateway (HTTP API) endpoint, `POST /payments`, made idempotent per request with the
 * client's `Idempotency-Key` header: a client that retries after a timeout gets the first
 * answer again instead of a second charge.
 *
 * The whole event is one unit of work here (the middleware sees it is not an SQS batch).
 */
import middy from '@middy/core'
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda'
import { idempotency } from 'middy-idempotency/event'
import { IdempotencyError, type IdempotencyLogger, type IdempotencyStore } from 'middy-idempotency'
import { DynamoDBStore } from 'middy-idempotency/dynamodb'

export interface PaymentRequest { amount: number, currency: string, cardToken: string }
export interface Charge { chargeId: string, amount: number, currency: string }

export interface HttpDependencies {
  store: IdempotencyStore
  charge: (request: PaymentRequest) => Promise<Charge>
  logger?: IdempotencyLogger | false
}

class BadRequestError extends Error {}

const json = (statusCode: number, body: unknown): APIGatewayProxyStructuredResultV2 =>
  ({ statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

/**
 * Turns the handler's result into an HTTP response, and errors into status codes. The
 * middleware's own refusals (400 without an Idempotency-Key, 409 while the same key runs, 422
 * for a key reused with another body) need no case here: it answers them itself, as
 * `application/problem+json`, after this hook (ours is outside), whatever this hook made of them.
 */
const httpResponses = (): middy.MiddlewareObj<APIGatewayProxyEventV2> => ({
  after: (request) => {
    request.response = json(201, request.response)
  },
  onError: (request) => {
    const error = request.error
    if (error instanceof BadRequestError) {
      request.response = json(400, { message: error.message })
    } else {
      request.response = json(500, { message: error instanceof IdempotencyError ? 'please retry' : 'internal error' })
    }
  }
})

const parseRequest = (event: APIGatewayProxyEventV2): PaymentRequest => {
  try {
    const body = JSON.parse(event.body ?? '') as Partial<PaymentRequest>
    if (Number.isSafeInteger(body.amount) && typeof body.currency === 'string' && typeof body.cardToken === 'string') {
      return body as PaymentRequest
    }
  } catch {}
  throw new BadRequestError('expected a JSON body with amount, currency and cardToken')
}

export const createHandler = ({ store, charge, logger }: HttpDependencies) =>
  // No result type: the handler returns a Charge, `httpResponses` makes it HTTP.
  middy<APIGatewayProxyEventV2>()
    // Outermost, i.e. `use`d first. Middy runs `after` hooks in reverse order, so ours runs
    // last and stores the final HTTP response, the one `httpResponses` built. On a retry our
    // `before` returns that stored response early, and an early return skips every `after`
    // hook: placed inside `httpResponses`, we would replay the handler's raw result, which
    // nothing would turn into HTTP any more.
    // The defaults for HTTP events: the key is the Idempotency-Key header (any case) with
    // the method and path, the payload the body; a replay carries `Idempotent-Replayed: true`.
    .use(idempotency<APIGatewayProxyEventV2>({
      store,
      // Clients retry within minutes; a day is what payment APIs commonly promise.
      expiresAfterSeconds: 24 * 3600,
      ...(logger === undefined ? {} : { logger })
    }))
    .use(httpResponses())
    // Only a successful charge is stored (and replayed). A thrown error, or a 5xx response,
    // releases the key, so the client's retry runs again; a 4xx response would be stored as
    // the answer.
    .handler(async (event) => await charge(parseRequest(event)))

export const handler = createHandler({
  store: new DynamoDBStore({ tableName: process.env.IDEMPOTENCY_TABLE ?? 'IdempotencyStore' }),
  charge: async (request) => {
    // Your payment provider's call goes here.
    throw new Error(`no card gateway configured to charge ${request.amount} ${request.currency}`)
  }
})
