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
