export interface RedisServer { url: string, port: number, stop: () => Promise<void> }
export declare const redisServerBinary: () => string
export declare const startRedisServer: (extraArgs?: string[]) => Promise<RedisServer>
