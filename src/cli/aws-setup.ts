/**
 * The AWS SDK's refusals for a machine not set up for AWS, in words that say what to set. The
 * SDK reads region and credentials from the environment and the shared config files
 * (https://docs.aws.amazon.com/sdkref/latest/guide/creds-config-files.html); its own messages,
 * `Region is missing` and `Could not load credentials from any providers`, name no variable.
 * DynamoDB Local checks neither, but the SDK still needs both before it sends a request.
 */

const REGION = 'no AWS region: set AWS_REGION (for example AWS_REGION=us-east-1) or a region in your AWS profile. ' +
  'With DynamoDB Local (AWS_ENDPOINT_URL_DYNAMODB) any region will do'

const CREDENTIALS = 'no AWS credentials: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. ' +
  'DynamoDB Local (AWS_ENDPOINT_URL_DYNAMODB) takes any: AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local'

/** What to set, when `error` (or an error it wraps) is the SDK finding no region or no credentials; else undefined. */
export const awsSetupProblem = (error: unknown): string | undefined => {
  const seen = new Set<unknown>()
  for (let at = error; at !== undefined && at !== null && !seen.has(at); at = (at as { cause?: unknown }).cause) {
    seen.add(at)
    const { name = '', message = '' } = at as { name?: string, message?: string }
    if (/^Region is missing/.test(message)) return `${REGION} (the AWS SDK said: ${message})`
    if (name === 'CredentialsProviderError' || /Could not load credentials/.test(message)) {
      return `${CREDENTIALS} (the AWS SDK said: ${message})`
    }
  }
  return undefined
}
