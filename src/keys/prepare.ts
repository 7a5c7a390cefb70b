import { IdempotencyKeyError } from '../errors.js'
import { inspect } from 'node:util'
import { hashOf, isEmptySelection, storedKey, type Select } from './selector.js'

/** One unit of work (an SQS record, or a whole event) once its key is known. */
export interface Unit {
  key: string
  payloadHash?: string
  attempt: number
}

/** The compiled `key` and `payload` options of one middleware. */
export interface Selection {
  namespace: string
  key: Select
  /** How the key is taken, for errors: `key path "body.orderId"`, `the key function`. */
  keyName: string
  payload?: Select
  /** The key is the source's default (not the `key` option): a source may scope it by its event. */
  defaultKey?: boolean
}

/** What names a unit in errors: a text, or a function of the unit's input that makes it. */
type UnitLabel = string | ((input: unknown) => string)

/**
 * Computes key and payload hash once, before the handler runs, so a handler that
 * mutates its input cannot change them. `label` names the unit in errors: a batch gives its
 * source's `label`, read of the record only when there is an error to name it in.
 * Throws `IdempotencyKeyError` naming the unit and what was wrong.
 */
export const prepareUnit = (
  selection: Selection,
  input: unknown,
  context: unknown,
  attempt: number,
  label: UnitLabel
): Unit => {
  // Every record of a batch comes through here: no closure, no string is made unless it fails.
  let key: unknown
  try {
    key = selection.key(input, context)
  } catch (error) {
    throw failed(label, input, 'the key cannot be taken', error)
  }
  if (isEmptySelection(key)) {
    const found = key === undefined || key === null ? 'nothing' : inspect(key, { depth: 4, breakLength: Infinity })
    throw new IdempotencyKeyError(`${nameOf(label, input)}: the key is empty (${selection.keyName} found ${found}): ` +
      'nothing to identify the work by')
  }
  let tenant: string | undefined
  try {
    tenant = tenantOf(context)
  } catch (error) {
    throw failed(label, input, 'the tenant cannot be read', error)
  }
  let stored: string
  try {
    stored = storedKey(selection.namespace, key, tenant)
  } catch (error) {
    throw failed(label, input, `the key from ${selection.keyName} cannot be hashed`, error)
  }
  const unit: Unit = { key: stored, attempt }
  const { payload } = selection
  if (payload !== undefined) {
    try {
      unit.payloadHash = hashOf(payload(input, context))
    } catch (error) {
      throw failed(label, input, 'the payload cannot be hashed', error)
    }
  }
  return unit
}

const nameOf = (label: UnitLabel, input: unknown): string => typeof label === 'string' ? label : label(input)

/** A step of `prepareUnit` failed: the IdempotencyKeyError that names the unit. */
const failed = (labelOf: UnitLabel, input: unknown, problem: string, error: unknown): IdempotencyKeyError => {
  const label = nameOf(labelOf, input)
  // The selectors already say what went wrong; anything else is a hashing problem.
  if (error instanceof IdempotencyKeyError) {
    const detail = error.problem === undefined ? {} : { detail: error.problem.detail }
    return new IdempotencyKeyError(`${label}: ${error.message}`, error.cause, { clientError: error.expose, ...detail })
  }
  return new IdempotencyKeyError(`${label}: ${problem}: ${(error as Error)?.message ?? String(error)}`, error,
    { clientError: false })
}

/**
 * The tenant of a function in Lambda's tenant isolation mode, which Lambda sets on its context as
 * `tenantId` from the `X-Amz-Tenant-Id` of the Invoke request. It scopes every key, so two
 * tenants that send the same work never share a record.
 * https://docs.aws.amazon.com/lambda/latest/dg/tenant-isolation-context.html
 *
 * In a durable execution the context is the durable SDK's, which keeps Lambda's as
 * `lambdaContext`; Middy 7's durable mode copies `tenantId` onto it from the SDK's
 * `executionContext`, which does not carry it, so there `context.tenantId` is undefined while
 * `context.lambdaContext.tenantId` holds the tenant. Both are read. Two tenants that disagree
 * leave the key's scope unknown: the unit fails rather than be stored under either.
 */
const tenantOf = (context: unknown): string | undefined => {
  if (typeof context !== 'object' || context === null) return undefined
  const own = tenantAt(context, 'context.tenantId')
  const inner = (context as { lambdaContext?: unknown }).lambdaContext
  const lambda = typeof inner === 'object' && inner !== null
    ? tenantAt(inner, 'context.lambdaContext.tenantId')
    : undefined
  if (own !== undefined && lambda !== undefined && own !== lambda) {
    const which = `context.tenantId (${JSON.stringify(own)}) ` +
      `and context.lambdaContext.tenantId (${JSON.stringify(lambda)})`
    throw new IdempotencyKeyError(`${which} name two tenants: the key cannot be scoped to its tenant`, undefined,
      { clientError: false })
  }
  return own ?? lambda
}

/** `tenantId` of one context object (`where` names it in errors): a well-formed string, or undefined when not set. */
const tenantAt = (context: object, where: string): string | undefined => {
  const tenant = (context as { tenantId?: unknown }).tenantId
  if (tenant === undefined || tenant === null) return undefined
  if (typeof tenant !== 'string') {
    const problem = `${where} is a ${typeof tenant}, not a string: the key cannot be scoped to its tenant`
    throw new IdempotencyKeyError(problem, undefined, { clientError: false })
  }
  try {
    encodeURIComponent(tenant)
  } catch (error) {
    const problem = `${where} is not well-formed Unicode (a lone surrogate): the key cannot be scoped to its tenant`
    throw new IdempotencyKeyError(problem, error, { clientError: false })
  }
  return tenant
}

/**
 * What is wrong with a namespace, or undefined. A stored key is namespace#hash, or
 * namespace#tenant#hash: a '#' of the namespace's own would make namespace 'orders#acme' read as
 * tenant acme of namespace 'orders'.
 */
export const namespaceProblem = (namespace: string): string | undefined => namespace.includes('#')
  ? `namespace must not contain '#' (got '${namespace}'): '#' separates the namespace from the tenant ` +
    "in a stored key, so another function's tenant could read as this namespace"
  : undefined

/** The `namespace` option's default: the function's name, so two functions never share keys. */
export const defaultNamespace = (): string => process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'middy-idempotency'
