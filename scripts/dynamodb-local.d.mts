import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'

export interface DynamoDBLocal { endpoint: string, stop: () => Promise<void> }
export declare const localClientConfig: (endpoint: string) => {
  endpoint: string
  region: string
  credentials: { accessKeyId: string, secretAccessKey: string }
}
/** `shortRun`: JVM options for a run of minutes (the tests), not for a long run's steady state (the benchmarks). */
export declare const startDynamoDBLocal: (options?: { shortRun?: boolean }) => Promise<DynamoDBLocal>
export declare const createIdempotencyTable: (
  client: DynamoDBClient,
  tableName: string,
  options?: { keyAttr?: string, sortKeyAttr?: string }
) => Promise<void>
