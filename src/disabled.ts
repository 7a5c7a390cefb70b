import type { Log } from './lifecycle/log.js'

/** The switch that turns idempotency off for local runs (as Powertools' `POWERTOOLS_IDEMPOTENCY_DISABLED` does). */
export const DISABLED_VARIABLE = 'MIDDY_IDEMPOTENCY_DISABLED'

/**
 * Whether idempotency is off for this invocation: `MIDDY_IDEMPOTENCY_DISABLED` is `true` or `1`
 * AND the code does not run in AWS Lambda (`AWS_LAMBDA_FUNCTION_NAME` unset) or runs in SAM's
 * local emulator (`AWS_SAM_LOCAL=true`, which also sets the function's name). In Lambda itself
 * the switch is refused: a variable copied into a deployed function must never let a payment
 * run twice, so idempotency stays on and the refusal is logged. Read at every call, so each
 * invocation says it runs unprotected.
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime
 */
export const isDisabled = (log: Log, env: Record<string, string | undefined> = process.env): boolean => {
  const value = env[DISABLED_VARIABLE]
  if (value === undefined || !['true', '1'].includes(value.trim().toLowerCase())) return false
  if (env.AWS_LAMBDA_FUNCTION_NAME !== undefined && env.AWS_SAM_LOCAL !== 'true') {
    log.error({ message: `idempotency: ${DISABLED_VARIABLE} is ignored in AWS Lambda (only local runs may turn idempotency off); idempotency stays on` })
    return false
  }
  log.warn({ message: `idempotency: DISABLED by ${DISABLED_VARIABLE}: this invocation runs with no idempotency (local runs only)` })
  return true
}
