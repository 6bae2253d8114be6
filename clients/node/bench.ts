/**
 * Claims/s through the wrapper vs raw commands from the same client in the
 * same run, for node-redis 5 and ioredis 5 (standalone; both pipeline the
 * concurrent commands of a batch on one connection). Raw and wrapper batches
 * alternate (ABBA), so the load of a busy machine hits both alike; the
 * elapsed and CPU time of each side is summed. BENCH_AA=1 runs raw against
 * itself: the noise floor.
 *
 *   python3 clients/testenv.py --no-cluster -- node clients/node/dist/bench.js [batches]
 */

import { Redis as IoRedis } from "ioredis";
import { createClient } from "redis";

import { TicketGate } from "./src";

const BATCH = 500;
type Claim = (event: string, user: string) => Promise<unknown>;
type Side = { claim: Claim; seconds: number; cpu: number };

async function batch(side: Side, event: string, prefix: string): Promise<void> {
  const start = process.hrtime.bigint();
  const cpuStart = process.cpuUsage();
  const claims = Array.from({ length: BATCH }, (_, i) => side.claim(event, `${prefix}${i}`));
  await Promise.all(claims);
  const cpu = process.cpuUsage(cpuStart);
  side.seconds += Number(process.hrtime.bigint() - start) / 1e9;
  side.cpu += (cpu.user + cpu.system) / 1e6;
}

async function compare(name: string, raw: Claim, gate: TicketGate, batches: number) {
  const event = `bench-${name.replace(/\W/g, "")}-${Date.now()}`;
  await gate.init(event, 10_000_000);
  const wrapped: Claim = process.env.BENCH_AA ? raw : (e, u) => gate.claim(e, u);
  const a: Side = { claim: raw, seconds: 0, cpu: 0 };
  const b: Side = { claim: wrapped, seconds: 0, cpu: 0 };
  for (let i = 0; i < 20; i++) await batch(a, event, `warm${i}-`); // connections, JIT, minting
  a.seconds = a.cpu = 0;
  for (let i = 0; i < batches; i++) {
    const order = i % 4 === 0 || i % 4 === 3 ? [a, b] : [b, a]; // ABBA
    for (const side of order) await batch(side, event, `${side === a ? "r" : "w"}${i}-`);
  }
  const claims = batches * BATCH;
  const rate = (s: Side) => (claims / s.seconds).toFixed(0);
  const cpu = (s: Side) => ((1e6 * s.cpu) / claims).toFixed(2);
  console.log(`${name}: ${batches} x ${BATCH} concurrent claims per side, batches alternating`);
  console.log(`  raw:     ${rate(a)} claims/s, ${cpu(a)} us client CPU per claim`);
  console.log(`  wrapper: ${rate(b)} claims/s, ${cpu(b)} us client CPU per claim`);
  console.log(`  wrapper cost: ${(100 * (b.seconds / a.seconds - 1)).toFixed(1)}% time`);
}

async function main() {
  const url = process.env.TICKETGATE_TEST_REDIS;
  if (!url) throw new Error("TICKETGATE_TEST_REDIS is not set: run through clients/testenv.py");
  const batches = Number(process.argv[2] ?? 400);
  const nodeRedis = createClient({ url });
  await nodeRedis.connect();
  const nodeRedisRaw: Claim = (e, u) => nodeRedis.sendCommand(["ticket.claim", e, u]);
  await compare("node-redis", nodeRedisRaw, new TicketGate(nodeRedis), batches);
  await nodeRedis.close();
  const ioredis = new IoRedis(url);
  const ioredisRaw: Claim = (e, u) => ioredis.call("ticket.claim", e, u);
  await compare("ioredis", ioredisRaw, new TicketGate(ioredis), batches);
  await ioredis.quit();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
