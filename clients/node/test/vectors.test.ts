/**
 * Unit tests: every shared vector (clients/vectors.json) through each
 * library's own decoder — node-redis 5's RESP2/RESP3 `Decoder` (objects and
 * `Map`s for maps) and ioredis's `redis-parser` + `Command` (RESP2: ioredis
 * speaks nothing else) — then through the package's builders and parsers.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { Decoder, RESP_TYPES } from "@redis/client/dist/lib/RESP/decoder";
import { Command } from "ioredis";
import RedisParser from "redis-parser";

import * as tg from "../src";
import { commands, ERRORS_BY_CODE, fromReplyError, TicketGateError } from "../src";
import type { Call } from "../src";

interface Vector {
  name: string;
  command: string[];
  call: { method: string; args: (string | number)[]; options: Record<string, unknown> } | null;
  resp2: string;
  resp3: string;
  expect: { kind: string; value?: unknown; code?: string; message?: string };
}

const VECTORS: Vector[] = JSON.parse(
  readFileSync(join(__dirname, "..", "..", "..", "vectors.json"), "utf8"),
).vectors;

type Decoded = { reply: unknown } | { error: Error };

function nodeRedisDecode(raw: string, mapAsMap: boolean): Decoded {
  let out: Decoded | undefined;
  const decoder = new Decoder({
    onReply: (reply) => (out = { reply }),
    onErrorReply: (error) => (out = { error }),
    onPush: () => undefined,
    getTypeMapping: () => (mapAsMap ? { [RESP_TYPES.MAP]: Map } : {}),
  });
  decoder.write(Buffer.from(raw, "utf8"));
  assert.ok(out, "the decoder gave no reply");
  return out;
}

async function ioredisDecode(raw: string): Promise<Decoded> {
  const command = new Command("ticket.x", [], { replyEncoding: "utf8" });
  const parser = new RedisParser({
    returnBuffers: true,
    returnReply: (reply) => command.resolve(reply),
    returnError: (error) => command.reject(error),
  });
  parser.execute(Buffer.from(raw, "utf8"));
  try {
    return { reply: await command.promise };
  } catch (error) {
    return { error: error as Error };
  }
}

function build(call: NonNullable<Vector["call"]>): Call<unknown> {
  const [event, second] = call.args.map(String);
  const o = call.options;
  switch (call.method) {
    case "init":
      return commands.init(event, Number(second), {
        ...o,
        transferUntil: o.transfer_until as number,
      });
    case "claim":
      return commands.claim(event, second, o);
    case "wait":
      return commands.wait(event, second, o);
    case "drop":
      return commands.drop(event, o);
    case "allocate":
      return commands.allocate(event, second, o);
    case "release":
      return commands.release(event, second, o);
    case "transfer":
      return commands.transfer(event, second, String(call.args[2]), o);
    case "resell":
    case "unlist":
      return commands[call.method](event, second, o);
    case "scan":
      return commands.scan(event, Number(second), Number(call.args[2]), o);
    case "status":
    case "layout":
    case "seatmap":
    case "allocations":
    case "open":
    case "close":
      return commands[call.method](event);
    default: {
      const builder = commands[call.method as "confirm"];
      assert.equal(typeof builder, "function", `no builder for ${call.method}`);
      return builder(event, second);
    }
  }
}

/** Our typed value in the vectors' language-neutral form. */
function neutral(kind: string, value: unknown): unknown {
  if (kind === "ok") return value === undefined ? { kind } : { kind: "not ok", value };
  if (value === null) return { kind: "nil" };
  if (kind === "status") {
    const s = value as Record<string, unknown>;
    const renamed: Record<string, unknown> = { ...s, opens_at: s.opensAt, closes_at: s.closesAt };
    if (s.categories instanceof Map) renamed.categories = Object.fromEntries(s.categories);
    delete renamed.opensAt;
    delete renamed.closesAt;
    if (s.resale === 0) delete renamed.resale; // STATUS sends it only when some are listed
    return { kind, value: renamed };
  }
  if (kind === "order") {
    const o = value as tg.Order;
    const seats = o.seats ? { seats: o.seats } : {};
    return {
      kind,
      value: {
        tickets: o.tickets,
        state: o.state,
        expires_at: o.expiresAt,
        ...seats,
        gens: o.gens,
      },
    };
  }
  if (kind === "layout") {
    const sections = (value as tg.Layout).sections.map((s) => ({
      ...s,
      rows: s.rows.map(({ firstId, ...row }) => ({ ...row, first_id: firstId })),
    }));
    return { kind, value: { sections } };
  }
  return { kind, value };
}

function check(vector: Vector, decoded: Decoded): void {
  const expect = vector.expect;
  if ("error" in decoded) {
    const mapped = fromReplyError(decoded.error);
    assert.ok(mapped instanceof TicketGateError, `not mapped: ${String(decoded.error)}`);
    assert.equal(expect.kind, "error", `unexpected error ${mapped.code} ${mapped.message}`);
    assert.equal(mapped.code, expect.code);
    assert.equal(mapped.message, expect.message);
    assert.equal(mapped.constructor, ERRORS_BY_CODE.get(mapped.code) ?? TicketGateError);
    return;
  }
  assert.ok(vector.call, "an operator command answered without an error");
  const typed = build(vector.call).parse(decoded.reply);
  const kind = expect.kind === "nil" ? "nil" : expect.kind;
  assert.deepEqual(neutral(kind, typed), expect);
}

test("the vectors cover every kind and the main error codes", () => {
  assert.ok(VECTORS.length > 50);
  const kinds = new Set(VECTORS.map((v) => v.expect.kind));
  for (const kind of [
    "ok",
    "ticket",
    "tickets",
    "integer",
    "bool",
    "nil",
    "status",
    "order",
    "layout",
    "seatmap",
  ]) {
    assert.ok(kinds.has(kind), kind);
  }
  const codes = new Set(VECTORS.map((v) => v.expect.code));
  for (const code of ["SOLDOUT", "NOEVENT", "EXISTS", "LIMIT", "TRYAGAIN", "ERR"]) {
    assert.ok(codes.has(code), code);
  }
});

test("builders send the vectors' argv", () => {
  for (const vector of VECTORS) {
    if (vector.call) assert.deepEqual(build(vector.call).args, vector.command, vector.name);
  }
});

for (const vector of VECTORS) {
  test(`vector: ${vector.name}`, async (t) => {
    await t.test("node-redis RESP2", () => check(vector, nodeRedisDecode(vector.resp2, false)));
    await t.test("node-redis RESP3", () => check(vector, nodeRedisDecode(vector.resp3, false)));
    await t.test("node-redis RESP3, maps as Map", () =>
      check(vector, nodeRedisDecode(vector.resp3, true)),
    );
    await t.test("ioredis RESP2", async () => check(vector, await ioredisDecode(vector.resp2)));
  });
}

test("codes without a class keep their code; other errors pass through", () => {
  const queue = tg.errorFor("QUEUE event 'e' sells through its queue: TICKET.WAIT");
  assert.ok(queue instanceof tg.QueueError && queue instanceof tg.TicketGateError);
  const other = tg.errorFor("NOPERM User u has no permissions");
  assert.equal(other.constructor, tg.TicketGateError);
  assert.equal(other.code, "NOPERM");
  const connection = new Error("Connection is closed.");
  assert.equal(tg.fromReplyError(connection), connection);
});

test("seat options go in order, SEATS last; init sends the layout as JSON", () => {
  const all = { count: 2, hold: 0, section: "A", category: "box", accessible: 1, split: true };
  assert.deepEqual(
    commands.claim("e", "u", all).args.slice(3),
    "COUNT 2 HOLD 0 SECTION A CATEGORY box ACCESSIBLE 1 SPLIT".split(" "),
  );
  assert.deepEqual(commands.claim("e", "u", { hold: 5, seats: [3, 1] }).args.slice(3), [
    "HOLD",
    "5",
    "SEATS",
    "3",
    "1",
  ]);
  const layout = { sections: [{ name: "A", rows: [{ name: "1", seats: 2 }] }] };
  assert.deepEqual(commands.init("e", 2, { seats: layout }).args.slice(-2), [
    "SEATS",
    JSON.stringify(layout),
  ]);
});

test("allocation options go in order, SEATS last; claims FROM before SEATS", () => {
  const all = { count: 4, section: "A", category: "box", key: "k", release: 99 };
  assert.deepEqual(
    commands.allocate("e", "house", all).args.slice(3),
    "COUNT 4 SECTION A CATEGORY box KEY k RELEASE 99".split(" "),
  );
  assert.deepEqual(
    commands.allocate("e", "p", { seats: [3, 1], key: "k" }).args.slice(3),
    "KEY k SEATS 3 1".split(" "),
  );
  assert.deepEqual(commands.release("e", "p").args, ["ticket.release", "e", "p"]);
  assert.deepEqual(commands.release("e", "p", { seats: [2] }).args.slice(3), ["SEATS", "2"]);
  const from = { count: 2, split: true, from: "p", key: "k", seats: [5, 6] };
  assert.deepEqual(
    commands.claim("e", "u", from).args.slice(3),
    "COUNT 2 SPLIT FROM p KEY k SEATS 5 6".split(" "),
  );
  assert.deepEqual(commands.claim("e", "u", { from: "p" }).args.slice(3), ["FROM", "p"]);
});

test("allocations parse with and without a release", () => {
  const reply = [
    [Buffer.from("house"), 4, 0, null],
    ["partner", 2n, 1, 1893456000000],
  ];
  assert.deepEqual(commands.allocations("e").parse(reply), [
    { name: "house", free: 4, claimed: 0, release: null },
    { name: "partner", free: 2, claimed: 1, release: 1893456000000 },
  ]);
  assert.deepEqual(commands.allocations("e").parse([]), []);
});

test("a layout names seat ids", () => {
  const vector = VECTORS.find((v) => v.name === "layout");
  assert.ok(vector);
  const layout = commands.layout("s1").parse(vector.resp2.split("\r\n")[1]);
  assert.ok(layout);
  assert.deepEqual(
    [1, 6, 7, 10].map((id) => layout.seatName(id)),
    ["A-1-1", "A-1-6", "A-2-101", "A-2-104"],
  );
  assert.ok(layout.seat(7).accessible && !layout.seat(8).accessible);
  assert.deepEqual([layout.total, layout.categories], [10, ["front", "box"]]);
  assert.throws(() => layout.seat(11), RangeError);
});

test("seat errors are typed", () => {
  assert.ok(
    tg.errorFor("NOTOGETHER event 'e' has no 3 seats together") instanceof tg.NotTogetherError,
  );
  assert.ok(tg.errorFor("TAKEN seat 'A-1-1' is taken") instanceof tg.TakenError);
  assert.ok(tg.errorFor("ORPHAN seat 'A-1-1' would be left alone") instanceof tg.OrphanError);
  assert.ok(tg.errorFor("SHORT event 'e' has 2 free") instanceof tg.ShortError);
  assert.ok(tg.errorFor("NOKEY allocation 'p' needs its key") instanceof tg.NoKeyError);
  assert.ok(tg.errorFor("NOALLOCATION no allocation 'p'") instanceof tg.NoAllocationError);
});

test("ioredis giving up after 16 redirections is a TryAgainError", () => {
  const moved = new Error("Too many Cluster redirections. Last error: ReplyError: MOVED 1 h:1");
  assert.ok(tg.fromReplyError(moved) instanceof tg.TryAgainError);
  const again = new Error("Too many Cluster redirections. Last error: ReplyError: TRYAGAIN x");
  const mapped = tg.fromReplyError(again);
  assert.ok(mapped instanceof tg.TryAgainError && mapped.message === "x");
});
