/**
 * middy-idempotency/event: `idempotency` for whole events (HTTP requests with an
 * `Idempotency-Key`, EventBridge events, direct invocations). The same middleware as the main
 * entry's, without the batch engine a whole-event handler never runs. Types, errors and
 * `MemoryStore` come from `middy-idempotency`.
 */
export { idempotency, idempotency as default } from './middleware/event-only.js'
export type { IdempotencyMiddleware } from './middleware/middleware.js'
export type { IdempotencyOptions, IdempotencyRequest } from './types.js'
