"use strict";
/**
 * Sends one command through whichever client the application has: a
 * node-redis 5 client or cluster, or an ioredis 5 `Redis` or `Cluster`,
 * routed by the event (the command's first argument) in a cluster. No
 * import of either library: the client is recognised by its methods.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.transportFor = transportFor;
function isIoredis(client) {
    return typeof client.call === "function";
}
function isNodeRedisCluster(client) {
    return "masters" in client && typeof client.sendCommand === "function";
}
function transportFor(client) {
    if (isIoredis(client))
        return ioredisTransport(client);
    if (isNodeRedisCluster(client)) {
        return (args, readonly) => client.sendCommand(args[1], readonly, args);
    }
    return (args) => client.sendCommand(args);
}
/**
 * ioredis routes a command in a cluster by the key positions of its own
 * command table, which has no module commands: `call("ticket.claim", ...)`
 * would go to a random node and be redirected (MOVED). So the transport
 * builds the `Command` itself and sets its keys to the event, which gives it
 * the event's slot. ioredis follows
 * MOVED for such a command as for any other.
 */
function ioredisTransport(client) {
    if (typeof client.nodes !== "function") {
        return (args) => client.call(...args); // a standalone Redis: nothing to route
    }
    let Command;
    return (args) => {
        Command ??= ioredisCommandClass(client);
        const command = new Command(args[0], args.slice(1), { replyEncoding: "utf8" });
        command.keys = [args[1]];
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
function ioredisCommandClass(client) {
    const own = client.constructor.Command;
    if (own)
        return own;
    let found;
    const standIn = Object.create(client);
    standIn.sendCommand = (command) => {
        found = command.constructor;
        return command.promise.catch(() => undefined);
    };
    standIn.call("ping").catch(() => undefined);
    if (!found)
        throw new TypeError("ticketgate: cannot find ioredis's Command class");
    return found;
}
