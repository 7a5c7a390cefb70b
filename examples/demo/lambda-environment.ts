/**
 * What Lambda (or the deployment) would set, applied before anything else is imported:
 * AWS SDK clients read these when they are constructed, and the example's module-level
 * `handler` constructs one on import.
 */
// The function's name is the default namespace of every idempotency key.
process.env.AWS_LAMBDA_FUNCTION_NAME ??= 'payments-consumer'
// The SDK warns on Node 20 about its future Node 22 requirement; the demo is not the place for it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true'
