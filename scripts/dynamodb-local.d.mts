import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'

export interface DynamoDBLocal { endpoint: string, stop: () => Promise<void> }
export declare const localClientConfig: (endpoint: string) => { endpoint: string, region: string, credentials: { accessKeyId: string, secretAccessKey: string } }
export declare const startDynamoDBLocal: () => Promise<DynamoDBLocal>
export declare const createIdempotencyTable: (client: DynamoDBClient, tableName: string, options?: { keyAttr?: string, sortKeyAttr?: string }) => Promise<void>
