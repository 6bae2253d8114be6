/**
 * Sends one command through whichever client the application has: a
 * node-redis 5 client or cluster, or an ioredis 5 `Redis` or `Cluster`,
 * routed by the event (the command's first argument) in a cluster. No
 * import of either library: the client is recognised by its methods.
 */
/** Sends argv (name first); `readonly` lets a cluster client use replicas if configured. */
export type Send = (args: string[], readonly: boolean) => Promise<unknown>;
interface NodeRedisClient {
    sendCommand(args: string[]): Promise<unknown>;
}
interface NodeRedisCluster {
    masters: unknown[];
    sendCommand(firstKey: string, isReadonly: boolean, args: string[]): Promise<unknown>;
}
/** The parts of ioredis's `Command` the transport touches. */
interface IoredisCommand {
    promise: Promise<unknown>;
}
interface Ioredis {
    call(...args: unknown[]): Promise<unknown>;
    sendCommand(command: IoredisCommand): unknown;
}
export type AnyClient = NodeRedisClient | NodeRedisCluster | Ioredis;
export declare function transportFor(client: AnyClient): Send;
export {};
