import type { Log } from './observe/log.js'

/** The switch that turns idempotency off for local runs (as Powertools' `POWERTOOLS_IDEMPOTENCY_DISABLED` does). */
export const DISABLED_VARIABLE = 'MIDDY_IDEMPOTENCY_DISABLED'

const OFF = ['true', '1']
const ON = ['false', '0', '']

/**
 * Whether the code runs in a real AWS Lambda execution environment, whatever was copied into its
 * configuration. `AWS_LAMBDA_INITIALIZATION_TYPE` is reserved: Lambda sets it in every execution
 * environment and a function's configuration cannot set it; SAM's local emulator does not set it
 * (it sets `AWS_SAM_LOCAL=true` and the function's name). `AWS_SAM_LOCAL` is not reserved, so it
 * alone proves nothing: it is only believed where Lambda's own variable is absent.
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime
 */
const inLambda = (env: Record<string, string | undefined>): boolean =>
  env.AWS_LAMBDA_INITIALIZATION_TYPE !== undefined ||
  (env.AWS_LAMBDA_FUNCTION_NAME !== undefined && env.AWS_SAM_LOCAL !== 'true')

/**
 * Whether idempotency is off for this invocation: `MIDDY_IDEMPOTENCY_DISABLED` is `true` or `1`
 * AND the code does not run in AWS Lambda. In Lambda itself the switch is refused: a variable
 * copied into a deployed function must never let a payment run twice, so idempotency stays on
 * and the refusal is logged. A value that is neither on nor off (`yes`) leaves idempotency on,
 * with a warning naming it. Read at every call, so each invocation says it runs unprotected.
 */
export const isDisabled = (log: Log, env: Record<string, string | undefined> = process.env): boolean => {
  const value = env[DISABLED_VARIABLE]
  if (value === undefined) return false
  const normalised = value.trim().toLowerCase()
  if (ON.includes(normalised)) return false
  if (!OFF.includes(normalised)) {
    log.warn({
      message: `idempotency: ${DISABLED_VARIABLE}=${JSON.stringify(value)} is not recognised ` +
        '(true or 1 turns idempotency off; false or 0 leaves it on): idempotency stays on'
    })
    return false
  }
  if (inLambda(env)) {
    log.error({
      message: `idempotency: ${DISABLED_VARIABLE} is ignored in AWS Lambda ` +
        '(only local runs may turn idempotency off); idempotency stays on'
    })
    return false
  }
  log.warn({
    message: `idempotency: DISABLED by ${DISABLED_VARIABLE}: this invocation runs with no idempotency (local runs only)`
  })
  return true
}
