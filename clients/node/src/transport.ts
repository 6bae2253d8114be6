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

type IoredisCommandClass = new (
  name: string,
  args: string[],
  options: { replyEncoding: string },
) => IoredisCommand;

interface Ioredis {
  call(...args: unknown[]): Promise<unknown>;
  sendCommand(command: IoredisCommand): unknown;
}

export type AnyClient = NodeRedisClient | NodeRedisCluster | Ioredis;

function isIoredis(client: object): client is Ioredis {
  return typeof (client as Ioredis).call === "function";
}

function isNodeRedisCluster(client: object): client is NodeRedisCluster {
  return "masters" in client && typeof (client as NodeRedisCluster).sendCommand === "function";
}

export function transportFor(client: AnyClient): Send {
  if (isIoredis(client)) return ioredisTransport(client);
  if (isNodeRedisCluster(client)) {
    return (args, readonly) => client.sendCommand(args[1], readonly, args);
  }
  return (args) => (client as NodeRedisClient).sendCommand(args);
}

/**
 * ioredis routes a command in a cluster by the key positions of its own
 * command table, which has no module commands: `call("ticket.claim", ...)`
 * would go to a random node and be redirected (MOVED). So the transport
 * builds the `Command` itself and sets its keys to the event, which gives it
 * the event's slot. ioredis follows
 * MOVED for such a command as for any other.
 */
function ioredisTransport(client: Ioredis): Send {
  if (typeof (client as { nodes?: unknown }).nodes !== "function") {
    return (args) => client.call(...args); // a standalone Redis: nothing to route
  }
  let Command: IoredisCommandClass | undefined;
  return (args) => {
    Command ??= ioredisCommandClass(client);
    const command = new Command(args[0], args.slice(1), { replyEncoding: "utf8" });
    (command as unknown as { keys: string[] }).keys = [args[1]];
    client.sendCommand(command);
    return command.promise;
  };
}

/**
 * ioredis's `Command` class, from the client itself (not an import that
 * could find another copy of ioredis): `Redis.Command` is public; a
 * `Cluster` has none, so the class is read off a command its `call` builds
 * on a stand-in whose `sendCommand` only keeps it.
 */
function ioredisCommandClass(client: Ioredis): IoredisCommandClass {
  const own = (client.constructor as { Command?: IoredisCommandClass }).Command;
  if (own) return own;
  let found: IoredisCommandClass | undefined;
  const standIn = Object.create(client) as Ioredis;
  standIn.sendCommand = (command: IoredisCommand) => {
    found = command.constructor as IoredisCommandClass;
    return command.promise.catch(() => undefined);
  };
  standIn.call("ping").catch(() => undefined);
  if (!found) throw new TypeError("ticketgate: cannot find ioredis's Command class");
  return found;
}
