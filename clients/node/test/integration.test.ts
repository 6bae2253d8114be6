/**
 * Integration tests against the real servers of clients/testenv.py
 * (TICKETGATE_TEST_REDIS, TICKETGATE_TEST_CLUSTER): every command through
 * node-redis (RESP2 and RESP3) and ioredis, a draw (50 entrants, offers in
 * the order recomputed from the revealed seed), a seated sale, the reference concurrency test
 * (1,000 users on 100 tickets), and in a 3-master cluster, for both
 * libraries: 0 MOVED per node, and recovery after a reshard.
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash, createHmac, randomBytes } from "node:crypto";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import { Cluster as IoCluster, Redis as IoRedis } from "ioredis";
import { createClient, createCluster } from "redis";

import * as tg from "../src";

function required(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(`${name} is not set: run the integration tests through clients/testenv.py`);
  return value;
}

const REDIS_URL = required("TICKETGATE_TEST_REDIS");
const CLUSTER = required("TICKETGATE_TEST_CLUSTER").split(",");
const TESTENV = join(__dirname, "..", "..", "..", "testenv.py");
const HOUR = 3_600_000;
const closers: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const close of closers) await close();
});

const newEvent = () => `node-${randomBytes(6).toString("hex")}`;

async function nodeRedis(resp: 2 | 3) {
  const client = createClient({ url: REDIS_URL, RESP: resp });
  await client.connect();
  closers.push(() => client.close());
  return client;
}

async function ioredis() {
  const client = new IoRedis(REDIS_URL);
  closers.push(() => client.quit());
  return client;
}

async function nodeRedisCluster() {
  const cluster = createCluster({ rootNodes: CLUSTER.map((a) => ({ url: `redis://${a}` })) });
  await cluster.connect();
  closers.push(() => cluster.close());
  return cluster;
}

async function ioredisCluster() {
  const [host, port] = CLUSTER[0].split(":");
  const cluster = new IoCluster([{ host, port: Number(port) }]);
  await new Promise((resolve, reject) => cluster.once("ready", resolve).once("error", reject));
  closers.push(() => cluster.quit());
  return cluster;
}

const STANDALONE = {
  "node-redis RESP2": () => nodeRedis(2),
  "node-redis RESP3": () => nodeRedis(3),
  ioredis: () => ioredis(),
};
const CLUSTERS = { "node-redis cluster": nodeRedisCluster, "ioredis Cluster": ioredisCluster };

async function saleEndToEnd(gate: tg.TicketGate, event: string) {
  await gate.init(event, 3, { hold: HOUR, limit: 2 });
  const status = await gate.status(event);
  assert.deepEqual([status.total, status.remaining, status.claimed], [3, 3, 0]);
  assert.equal(status.status, "open");
  assert.match(status.incarnation ?? "", /^[0-9a-f]{16}$/);
  assert.equal(status.draw, undefined);
  assert.deepEqual(await gate.claim(event, "alice", { count: 2 }), [1, 2]);
  const order = await gate.order(event, "alice");
  assert.equal(order?.state, "held");
  assert.ok((order?.expiresAt ?? 0) > Date.now());
  assert.equal(await gate.confirm(event, "alice"), 2);
  assert.deepEqual(await gate.order(event, "alice"), {
    tickets: [1, 2],
    state: "sold",
    expiresAt: 0,
    gens: [1, 1],
  });
  assert.equal(await gate.claim(event, "bob", { hold: 0 }), 3);
  assert.equal(await gate.holder(event, "bob"), 3);
  assert.equal(await gate.holder(event, "nobody"), null);
  await assert.rejects(gate.claim(event, "carol"), (e: unknown) => {
    assert.ok(e instanceof tg.SoldOutError);
    assert.equal(e.code, "SOLDOUT");
    assert.equal(e.message, `event '${event}' is sold out`);
    return true;
  });
  assert.equal(await gate.wait(event, "carol"), 1);
  assert.equal(await gate.position(event, "carol"), 1);
  assert.equal(await gate.cancel(event, "bob"), 3);
  assert.equal(await gate.position(event, "carol"), 0); // offered
  assert.deepEqual((await gate.order(event, "carol"))?.tickets, [3]);
  assert.equal(await gate.wait(event, "dave"), 1);
  assert.equal(await gate.leave(event, "dave"), true);
  assert.equal(await gate.leave(event, "dave"), false);
}

/** Section A: row 1 of six seats (ids 1-6), row 2 of four from 101 (ids 7-10), a wheelchair space first. */
const HALL = {
  sections: [
    {
      name: "A",
      category: "front",
      rows: [
        { name: "1", seats: 6 },
        { name: "2", seats: 4, first: 101, accessible: [1], category: "box" },
      ],
    },
  ],
};

async function aSeatedSale(gate: tg.TicketGate, event: string) {
  await gate.init(event, 10, { hold: HOUR, limit: 4, seats: HALL });
  const layout = await gate.layout(event);
  assert.ok(layout);
  assert.equal(layout.total, 10);
  assert.equal(await gate.seatmap(event), "..........");
  const ann = await gate.claim(event, "ann", { count: 2 });
  assert.deepEqual(
    ann.map((id) => layout.seatName(id)),
    ["A-1-3", "A-1-4"],
  );
  await assert.rejects(gate.claimSeats(event, "bob", [4]), (e: tg.TakenError) => {
    assert.ok(e instanceof tg.TakenError);
    return e.message === "seat 'A-1-4' is taken";
  });
  await assert.rejects(gate.claimSeats(event, "bob", [8]), tg.OrphanError);
  assert.deepEqual(await gate.claimSeats(event, "bob", [5, 6], { hold: 0 }), [5, 6]);
  assert.deepEqual(await gate.claim(event, "cy", { count: 2, accessible: 1 }), [7, 8]);
  await assert.rejects(gate.claim(event, "dee", { count: 3 }), tg.NotTogetherError);
  assert.deepEqual(await gate.claim(event, "dee", { count: 3, split: true }), [1, 2, 9]);
  assert.deepEqual(await gate.claim(event, "eve", { count: 1, category: "box" }), [10]);
  const status = await gate.status(event);
  assert.equal(status.remaining, 0);
  assert.deepEqual(
    [...(status.categories ?? [])],
    [
      ["front", 0],
      ["box", 0],
    ],
  );
  assert.equal(status.accessible, 0);
  assert.deepEqual((await gate.order(event, "cy"))?.seats, ["A-2-101", "A-2-102"]);
  assert.equal(await gate.seatmap(event), "hhhhsshhhh");
  assert.equal(await gate.cancel(event, "dee"), 1); // every seat of the order back
  assert.equal(await gate.seatmap(event), "..hhsshh.h");
  await gate.init(`${event}-plain`, 1);
  assert.equal(await gate.layout(`${event}-plain`), null);
  assert.equal(await gate.seatmap(`${event}-plain`), null);
  assert.equal((await gate.status(`${event}-plain`)).categories, undefined);
}

/** House seats with a release time and a partner with a key; claims FROM; release. */
async function allocations(gate: tg.TicketGate, event: string) {
  await gate.init(event, 10, { limit: 4, seats: HALL });
  const in2100 = 4102444800000;
  assert.deepEqual(await gate.allocate(event, "house", { seats: [5, 6], release: in2100 }), [5, 6]);
  const fanclub = { count: 2, category: "box", key: "fc" };
  assert.deepEqual(await gate.allocate(event, "fanclub", fanclub), [8, 9]);
  await assert.rejects(gate.allocate(event, "fanclub", { count: 1, key: "x" }), tg.NoKeyError);
  await assert.rejects(gate.allocate(event, "more", { count: 7 }), (e: unknown) => {
    assert.ok(e instanceof tg.ShortError);
    return e.message === `event '${event}' has 5 free`; // COUNT skips the wheelchair space
  });
  assert.equal(await gate.seatmap(event), "....aa.aa.");
  assert.equal((await gate.status(event)).allocated, 4);
  await assert.rejects(gate.claim(event, "fan1", { count: 2, from: "fanclub" }), tg.NoKeyError);
  const fromFanclub = { from: "fanclub", key: "fc" };
  assert.deepEqual(await gate.claim(event, "fan1", { count: 2, ...fromFanclub }), [8, 9]);
  await assert.rejects(gate.claim(event, "fan2", fromFanclub), tg.SoldOutError);
  await assert.rejects(gate.claimSeats(event, "fan2", [5], { from: "x" }), tg.NoAllocationError);
  assert.deepEqual(await gate.claim(event, "pub", { count: 4 }), [1, 2, 3, 4]);
  assert.deepEqual(await gate.allocations(event), [
    { name: "fanclub", free: 0, claimed: 2, release: null },
    { name: "house", free: 2, claimed: 0, release: in2100 },
  ]);
  assert.equal(await gate.release(event, "house", { seats: [5] }), 1);
  assert.equal(await gate.release(event, "house"), 1);
  const status = await gate.status(event);
  assert.deepEqual([status.remaining, status.allocated], [4, undefined]);
  assert.equal(await gate.seatmap(event), "ssss...ss.");
}

/** A sold ticket changes hands, a generation up, and is admitted at the door once. */
async function transferAndScan(gate: tg.TicketGate, event: string) {
  await gate.init(event, 5, { hold: 3600000, limit: 2 });
  assert.deepEqual(await gate.claim(event, "ann", { count: 2, hold: 0 }), [1, 2]);
  assert.equal(await gate.transfer(event, "ann", "ben", { tickets: [2] }), 1);
  assert.deepEqual((await gate.order(event, "ben"))?.gens, [2]);
  await gate.scan(event, 2, 2, { gate: "north" });
  await assert.rejects(gate.scan(event, 2, 2), (e: unknown) => {
    assert.ok(e instanceof tg.UsedError);
    return e.message.endsWith("at gate 'north'");
  });
  await assert.rejects(gate.scan(event, 2, 1), tg.StaleError);
  await assert.rejects(gate.scan(event, 5, 1), tg.NotSoldError);
  await assert.rejects(gate.transfer(event, "ben", "cy"), tg.UsedError);
  assert.equal(await gate.claim(event, "dee"), 3); // held
  await assert.rejects(gate.transfer(event, "dee", "cy"), tg.NotSoldError);
  await assert.rejects(gate.transfer(event, "nobody", "cy"), tg.NoHoldError);
  assert.deepEqual(await gate.claim(event, "eve", { count: 2, hold: 0 }), [4, 5]);
  await assert.rejects(gate.transfer(event, "ann", "eve"), tg.LimitError);
  assert.equal(await gate.transfer(event, "ann", "fay"), 1);
  await gate.scan(event, 1, 2);
}

/** Listed tickets go to a buyer once the free ones are gone; every refusal is typed. */
async function resellAndUnlist(gate: tg.TicketGate, event: string) {
  await gate.init(event, 6, { hold: 3600000, limit: 4 });
  assert.deepEqual(await gate.claim(event, "ann", { count: 2, hold: 0 }), [1, 2]);
  assert.equal(await gate.claim(event, "ben", { hold: 0 }), 3);
  await gate.scan(event, 3, 1);
  assert.equal(await gate.claim(event, "cy"), 4); // held
  assert.equal((await gate.status(event)).resale, 0);
  assert.equal(await gate.resell(event, "ann", { tickets: [2] }), 1);
  await assert.rejects(gate.resell(event, "ann", { tickets: [2] }), (e: unknown) => {
    assert.ok(e instanceof tg.ListedError);
    return e.message === "ticket 2 is listed already";
  });
  await assert.rejects(gate.transfer(event, "ann", "zoe"), tg.ListedError);
  assert.equal((await gate.status(event)).resale, 1);
  await assert.rejects(gate.resell(event, "cy"), tg.NotSoldError);
  await assert.rejects(gate.resell(event, "ben"), tg.UsedError);
  await assert.rejects(gate.resell(event, "nobody"), tg.NoHoldError);
  await assert.rejects(gate.unlist(event, "ann", { tickets: [1] }), tg.NotListedError);
  assert.deepEqual(await gate.claim(event, "dee", { count: 2 }), [5, 6]);
  assert.equal(await gate.claim(event, "eve"), 2); // the listed one
  assert.equal(await gate.confirm(event, "eve"), 1);
  assert.deepEqual((await gate.order(event, "eve"))?.gens, [2]);
  assert.equal(await gate.resell(event, "ann"), 1);
  assert.equal(await gate.unlist(event, "ann"), 1);
  assert.equal(await gate.unlist(event, "ann"), 0);
  assert.equal((await gate.status(event)).resale, 0);
}

async function errorsAreTyped(gate: tg.TicketGate, event: string) {
  await assert.rejects(gate.status(event), tg.NoEventError);
  await gate.init(event, 1, { opens: 4102444800000 });
  await assert.rejects(gate.init(event, 1), tg.ExistsError);
  await assert.rejects(gate.claim(event, "u"), tg.NotOpenError);
  await assert.rejects(gate.init(event + "x", 1, { limit: 0 }), (e: unknown) => {
    assert.ok(e instanceof tg.InvalidError);
    assert.equal(e.code, "ERR");
    assert.match(e.message, /^LIMIT must be between/);
    return true;
  });
  await assert.rejects(gate.confirm(event, "u"), tg.NoHoldError);
  await gate.open(event);
  await gate.close(event);
  await assert.rejects(gate.claim(event, "u"), tg.ClosedError);
  await assert.rejects(gate.drop(event), tg.UnsyncedError);
  assert.ok((await gate.drop(event, { force: true })) >= 1);
}

/**
 * The draw's order, recomputed as a buyer would: rank = the first 6 bytes
 * (big-endian) of HMAC-SHA256(seed, user id), ties by the id bytes.
 */
function drawnOrder(seed: Buffer, users: string[]): string[] {
  const rank = (user: string) => createHmac("sha256", seed).update(user).digest().readUIntBE(0, 6);
  return [...users].sort(
    (a, b) => rank(a) - rank(b) || Buffer.compare(Buffer.from(a), Buffer.from(b)),
  );
}

/** 50 users enter a draw for 10 tickets; OPEN reveals the seed; offers follow it. */
async function aDraw(gate: tg.TicketGate, event: string) {
  await gate.init(event, 10, { hold: HOUR, draw: true });
  const before = await gate.status(event);
  assert.equal(before.status, "closed");
  assert.equal(before.seed, undefined);
  assert.match(before.draw ?? "", /^[0-9a-f]{64}$/);
  const users = Array.from({ length: 50 }, (_, i) => `fan-${String(i).padStart(2, "0")}`);
  for (const user of users) assert.equal(await gate.wait(event, user), tg.ENTERED);
  assert.equal(await gate.position(event, "fan-07"), tg.ENTERED);
  await assert.rejects(gate.claim(event, "fan-07"), tg.NotOpenError);
  await gate.open(event);
  const after = await gate.status(event);
  assert.equal(after.draw, before.draw);
  const seed = Buffer.from(after.seed ?? "", "hex");
  assert.equal(createHash("sha256").update(seed).digest("hex"), after.draw);
  const order = drawnOrder(seed, users);
  for (const [i, user] of order.slice(0, 10).entries()) {
    const offer = await gate.order(event, user);
    assert.deepEqual([offer?.tickets, offer?.state], [[i + 1], "held"], user);
  }
  assert.deepEqual([after.held, after.waiting, after.remaining], [10, 40, 0]);
  await assert.rejects(gate.claim(event, order[10]), (e: unknown) => {
    assert.ok(e instanceof tg.QueueError, String(e));
    assert.equal(e.code, "QUEUE");
    assert.equal(e.message, `event '${event}' sells through its queue: TICKET.WAIT`);
    return true;
  });
  assert.equal(await gate.position(event, order[10]), 1);
  assert.equal(await gate.claim(event, order[0]), 1);
  assert.equal(await gate.wait(event, "late"), 41);
  await assert.rejects(gate.init(`${event}-bad`, 5, { draw: true }), tg.InvalidError);
  await gate.init(`${event}-admit`, 5, { offer: HOUR, draw: true, admit: 20 });
  assert.equal((await gate.status(`${event}-admit`)).admit, 20);
}

async function thousandUsersHundredTickets(gate: tg.TicketGate, event: string) {
  await gate.init(event, 100);
  const results = await Promise.all(
    Array.from({ length: 1000 }, (_, i) => gate.claim(event, `user${i}`).catch((e: unknown) => e)),
  );
  const winners = results.filter((r): r is number => typeof r === "number").sort((a, b) => a - b);
  assert.deepEqual(
    winners,
    Array.from({ length: 100 }, (_, i) => i + 1),
  );
  assert.equal(results.filter((r) => r instanceof tg.SoldOutError).length, 900);
  assert.equal((await gate.status(event)).remaining, 0);
}

for (const [name, connect] of Object.entries(STANDALONE)) {
  describe(`standalone, ${name}`, () => {
    test("a sale end to end", async () =>
      saleEndToEnd(new tg.TicketGate(await connect()), newEvent()));
    test("errors are typed", async () =>
      errorsAreTyped(new tg.TicketGate(await connect()), newEvent()));
    test("a draw", async () => aDraw(new tg.TicketGate(await connect()), newEvent()));
    test("a seated sale", async () => aSeatedSale(new tg.TicketGate(await connect()), newEvent()));
    test("allocations", async () => allocations(new tg.TicketGate(await connect()), newEvent()));
    test("transfer and scan", async () =>
      transferAndScan(new tg.TicketGate(await connect()), newEvent()));
    test("resell and unlist", async () =>
      resellAndUnlist(new tg.TicketGate(await connect()), newEvent()));
    test("1,000 users on 100 tickets", async () =>
      thousandUsersHundredTickets(new tg.TicketGate(await connect()), newEvent()));
  });
}

/** Per node: calls of ticket.* commands and MOVED errors so far. */
async function nodeStats(): Promise<Map<string, Map<string, number>>> {
  const out = new Map<string, Map<string, number>>();
  for (const address of CLUSTER) {
    const conn = createClient({ url: `redis://${address}` });
    await conn.connect();
    const info = (await conn.sendCommand(["INFO", "all"])) as string;
    await conn.close();
    const stats = new Map<string, number>();
    for (const m of info.matchAll(/^cmdstat_(ticket\.\w+):calls=(\d+)/gm))
      stats.set(m[1], Number(m[2]));
    const moved = /^errorstat_MOVED:count=(\d+)/m.exec(info);
    stats.set("MOVED", moved ? Number(moved[1]) : 0);
    out.set(address, stats);
  }
  return out;
}

function delta(
  before: Map<string, Map<string, number>>,
  now: Map<string, Map<string, number>>,
  address: string,
  name: string,
) {
  return (now.get(address)?.get(name) ?? 0) - (before.get(address)?.get(name) ?? 0);
}

/** The master that owns an event's slot, as host:port. */
async function ownerOf(event: string): Promise<string> {
  const conn = createClient({ url: `redis://${CLUSTER[0]}` });
  await conn.connect();
  const slot = Number(await conn.sendCommand(["CLUSTER", "KEYSLOT", event]));
  const slots = (await conn.sendCommand(["CLUSTER", "SLOTS"])) as [
    number,
    number,
    [string, number],
  ][];
  await conn.close();
  const range = slots.find(([from, to]) => from <= slot && slot <= to);
  assert.ok(range, `slot ${slot} has no owner`);
  return `${range[2][0]}:${range[2][1]}`;
}

async function eventsOnEveryNode(): Promise<Map<string, string>> {
  const owners = new Map<string, string>();
  while (new Set(owners.values()).size < CLUSTER.length) {
    const event = newEvent();
    owners.set(event, await ownerOf(event));
  }
  return owners;
}

for (const [name, connect] of Object.entries(CLUSTERS)) {
  describe(name, () => {
    test("every command reaches the event's master first time (0 MOVED)", async () => {
      const gate = new tg.TicketGate(await connect());
      const owners = await eventsOnEveryNode();
      const before = await nodeStats();
      for (const event of owners.keys()) {
        await gate.init(event, 10);
        for (let i = 0; i < 12; i++) await gate.claim(event, `u${i}`).catch(() => undefined);
        await gate.status(event);
      }
      const now = await nodeStats();
      for (const address of CLUSTER) {
        const mine = [...owners.values()].filter((owner) => owner === address).length;
        assert.equal(delta(before, now, address, "MOVED"), 0, address);
        assert.equal(delta(before, now, address, "ticket.claim"), 12 * mine, address);
        assert.equal(delta(before, now, address, "ticket.status"), mine, address);
      }
    });

    test("seat commands reach the event's master first time (0 MOVED)", async () => {
      const gate = new tg.TicketGate(await connect());
      const owners = await eventsOnEveryNode();
      const before = await nodeStats();
      for (const event of owners.keys()) {
        await gate.init(event, 10, { limit: 2, seats: HALL });
        assert.deepEqual(await gate.claim(event, "a", { count: 2, section: "A" }), [3, 4]);
        assert.deepEqual(await gate.claimSeats(event, "b", [5, 6]), [5, 6]);
        assert.equal((await gate.layout(event))?.seatName(7), "A-2-101");
        assert.equal(await gate.seatmap(event), "..ssss....");
      }
      const now = await nodeStats();
      for (const address of CLUSTER) {
        const mine = [...owners.values()].filter((owner) => owner === address).length;
        assert.equal(delta(before, now, address, "MOVED"), 0, address);
        for (const [command, calls] of [
          ["claim", 2],
          ["layout", 1],
          ["seatmap", 1],
        ] as const) {
          assert.equal(delta(before, now, address, `ticket.${command}`), calls * mine, command);
        }
      }
    });

    test("follows MOVED after a reshard", async () => {
      const gate = new tg.TicketGate(await connect());
      const event = newEvent();
      await gate.init(event, 10);
      assert.equal(await gate.claim(event, "a"), 1);
      const old = await ownerOf(event);
      const target = CLUSTER.find((a) => a !== old) ?? "";
      execFileSync("python3", [
        TESTENV,
        "move-slot",
        "--cluster",
        CLUSTER.join(","),
        "--key",
        `ticket:{${event}}:meta`,
        "--to",
        target,
      ]);
      assert.equal(await ownerOf(event), target);
      const before = await nodeStats();
      assert.equal(await gate.claim(event, "b"), 2);
      assert.deepEqual(await gate.claim(event, "c", { count: 1 }), [3]);
      assert.equal((await gate.status(event)).claimed, 3);
      const now = await nodeStats();
      assert.ok(delta(before, now, old, "MOVED") <= 1, "more than one MOVED after the reshard");
      assert.equal(delta(before, now, target, "ticket.claim"), 2);
    });

    test("1,000 users on 100 tickets", async () =>
      thousandUsersHundredTickets(new tg.TicketGate(await connect()), newEvent()));

    test("an event being restored answers TryAgainError", async () => {
      const gate = new tg.TicketGate(await connect());
      const event = newEvent();
      const begin = [
        "BEGIN",
        "1111111111111111",
        "10",
        "10",
        "open",
        "0",
        "0",
        "0",
        "1",
        "600000",
        "0",
        "0",
      ];
      await gate.run({ args: ["ticket.restore", event, ...begin], readonly: false, parse: String });
      await assert.rejects(gate.claim(event, "u"), (e: unknown) => {
        assert.ok(e instanceof tg.TryAgainError, String(e));
        // node-redis passes the reply on; ioredis retries it (on random nodes) and gives up.
        assert.match(e.message, new RegExp(`event '${event}' is being restored|gave up after 16`));
        return true;
      });
    });
  });
}
