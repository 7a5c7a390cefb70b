import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda'
import type { IdempotencyStore } from '../../src/index.js'
import { createHandler, type Charge, type PaymentRequest } from '../sam-app/src/http-handler.js'
import { heading, shorten, table } from './print.js'
import { lambdaContext } from './sqs-messages.js'

let requests = 0

/** `POST /payments` as an HTTP API delivers it: every request, a retry too, has its own id and time. */
const post = (body: PaymentRequest, idempotencyKey?: string): APIGatewayProxyEventV2 => {
  const requestId = `api-req-${++requests}`
  const now = Date.now()
  return {
    version: '2.0',
    routeKey: 'POST /payments',
    rawPath: '/payments',
    rawQueryString: '',
    headers: {
      'content-type': 'application/json',
      ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey })
    },
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'api.example.com',
      domainPrefix: 'api',
      http: {
        method: 'POST', path: '/payments', protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'checkout/1.0'
      },
      requestId,
      routeKey: 'POST /payments',
      stage: '$default',
      time: new Date(now).toISOString(),
      timeEpoch: now
    },
    body: JSON.stringify(body),
    isBase64Encoded: false
  }
}

/** The HTTP example: a client's retry gets the first answer; a reused key or a missing one is refused. */
export const httpStory = async (
  store: IdempotencyStore
): Promise<{ problems: string[], requests: number, charges: number }> => {
  heading('8. The HTTP example (examples/sam-app/src/http-handler.ts): POST /payments with an Idempotency-Key',
    'The client timed out and retried; then it reused the key for another amount; then it forgot the key.')
  const charges: Charge[] = []
  // Lambda sets the function name, which namespaces the keys: this is another function.
  process.env.AWS_LAMBDA_FUNCTION_NAME = 'payments-api'
  const handler = createHandler({
    store,
    charge: async (request) => {
      const charge = { chargeId: `ch_web_${charges.length + 1}`, amount: request.amount, currency: request.currency }
      charges.push(charge)
      return charge
    },
    logger: false
  })
  const order = { amount: 4999, currency: 'EUR', cardToken: 'tok_visa_4242' }
  const key = '5b0c7e52-8d1f-4f0e-9a57-2f4d0f3c1a11'
  const steps: Array<[string, APIGatewayProxyEventV2, number]> = [
    ['first request', post(order, key), 201],
    ['retry', post(order, key), 201],
    ['same key, other amount', post({ ...order, amount: 9999 }, key), 422],
    ['no key', post(order), 400]
  ]
  const problems: string[] = []
  const rows: string[][] = []
  for (const [what, event, expected] of steps) {
    const before = charges.length
    const response = await handler(event, lambdaContext()) as APIGatewayProxyStructuredResultV2
    rows.push([
      what,
      event.headers['idempotency-key'] === undefined ? '-' : `${key.slice(0, 8)}…`,
      String(response.statusCode),
      charges.length > before ? 'yes' : 'no',
      shorten(String(response.body), 80)
    ])
    if (response.statusCode !== expected) {
      problems.push(`HTTP ${what}: expected ${expected}, got ${response.statusCode}`)
    }
  }
  table(['request', 'key', 'status', 'charged', 'response body'], rows)
  if (charges.length !== 1) problems.push(`HTTP: ${charges.length} charges for one payment`)
  const sameKey = steps.filter(([, event]) => event.headers['idempotency-key'] === key).length
  return { problems, requests: sameKey, charges: charges.length }
}
