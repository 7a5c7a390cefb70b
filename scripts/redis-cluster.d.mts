export interface RedisCluster { nodes: string[], stop: () => Promise<void> }
export declare const startRedisCluster: (size?: number) => Promise<RedisCluster>
