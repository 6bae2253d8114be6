/**
 * Claims/s through the wrapper vs raw commands from the same client in the
 * same run, for node-redis 5 and ioredis 5 (standalone; both pipeline the
 * concurrent commands of a batch on one connection). Alternating rounds;
 * medians and the median of the rounds' ratios.
 *
 *   python3 clients/testenv.py --no-cluster -- node clients/node/dist/bench.js [rounds] [claims per round]
 */

import { Redis as IoRedis } from "ioredis";
import { createClient } from "redis";

import { TicketGate } from "./src";

const CLAIMS = Number(process.argv[3] ?? 20000);
const CONCURRENCY = 500;
type Claim = (event: string, user: string) => Promise<unknown>;

interface Round {
  /** Claims per second of wall time. */
  rate: number;
  /** This process's CPU time per claim, in microseconds (less noisy on a busy machine). */
  cpu: number;
}

async function round(claim: Claim, event: string, prefix: string): Promise<Round> {
  const start = process.hrtime.bigint();
  const cpuStart = process.cpuUsage();
  for (let base = 0; base < CLAIMS; base += CONCURRENCY) {
    const batch = Array.from({ length: CONCURRENCY }, (_, i) =>
      claim(event, `${prefix}${base + i}`),
    );
    await Promise.all(batch);
  }
  const cpu = process.cpuUsage(cpuStart);
  const rate = CLAIMS / (Number(process.hrtime.bigint() - start) / 1e9);
  return { rate, cpu: (cpu.user + cpu.system) / CLAIMS };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function compare(name: string, raw: Claim, gate: TicketGate, rounds: number) {
  const event = `bench-${name.replace(/\W/g, "")}-${Date.now()}`;
  await gate.init(event, 10_000_000);
  await round(raw, event, "warm"); // connections, JIT, minting
  const results: Record<"raw" | "wrapper", Round[]> = { raw: [], wrapper: [] };
  // BENCH_AA=1: raw against itself, to see the noise floor of this machine.
  const wrapped: Claim = process.env.BENCH_AA ? raw : (e, u) => gate.claim(e, u);
  for (let r = 0; r < rounds; r++) {
    const order: ["raw" | "wrapper", Claim][] = [
      ["raw", raw],
      ["wrapper", wrapped],
    ];
    for (const [kind, claim] of r % 2 ? order.reverse() : order) {
      results[kind].push(await round(claim, event, `${kind[0]}${r}-`)); // same-length user ids
    }
  }
  const rate = (kind: "raw" | "wrapper") => median(results[kind].map((x) => x.rate));
  const cpu = (kind: "raw" | "wrapper") => median(results[kind].map((x) => x.cpu));
  // Rounds come in pairs (raw first, then wrapper first): the geometric mean of
  // a pair's two ratios cancels any advantage of running first or second.
  const ratio = (i: number) => results.wrapper[i].rate / results.raw[i].rate;
  const ratios = Array.from({ length: rounds / 2 }, (_, k) =>
    Math.sqrt(ratio(2 * k) * ratio(2 * k + 1)),
  );
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  console.log(`${name}, ${CONCURRENCY} concurrent, ${CLAIMS} claims x ${rounds} rounds (medians):`);
  console.log(
    `  raw:     ${rate("raw").toFixed(0)} claims/s, ${cpu("raw").toFixed(2)} us CPU/claim`,
  );
  console.log(
    `  wrapper: ${rate("wrapper").toFixed(0)} claims/s, ${cpu("wrapper").toFixed(2)} us CPU/claim`,
  );
  console.log(
    `  wrapper cost: ${pct(1 - median(ratios))} claims/s (median over pairs of rounds), ` +
      `${pct(cpu("wrapper") / cpu("raw") - 1)} client CPU`,
  );
}

async function main() {
  const url = process.env.TICKETGATE_TEST_REDIS;
  if (!url) throw new Error("TICKETGATE_TEST_REDIS is not set: run through clients/testenv.py");
  const rounds = 2 * Math.ceil(Number(process.argv[2] ?? 10) / 2);
  const nodeRedis = createClient({ url });
  await nodeRedis.connect();
  await compare(
    "node-redis",
    (e, u) => nodeRedis.sendCommand(["ticket.claim", e, u]),
    new TicketGate(nodeRedis),
    rounds,
  );
  await nodeRedis.close();
  const ioredis = new IoRedis(url);
  await compare(
    "ioredis",
    (e, u) => ioredis.call("ticket.claim", e, u),
    new TicketGate(ioredis),
    rounds,
  );
  await ioredis.quit();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
