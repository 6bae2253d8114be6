/**
 * What each method sends and how its reply is read (pure). Names are
 * lower-case (`ticket.claim`) and the event is the first argument: the
 * transports route each command by it to the event's slot in a cluster.
 */

import * as replies from "./replies";

/** One command: its argv (name first), whether it only reads, and its reply's parser. */
export interface Call<T> {
  args: string[];
  readonly: boolean;
  parse: (reply: replies.Reply) => T;
}

export interface InitOptions {
  /** Claims accepted from (unix ms). */
  opens?: number;
  /** Claims refused from (unix ms). */
  closes?: number;
  /** Default hold of a claim in ms (0 = a final sale). */
  hold?: number;
  /** Most tickets one user may hold. */
  limit?: number;
  /** How long a waiting-list offer is held, in ms. */
  offer?: number;
  /**
   * A draw event (needs `hold` > 0 or `offer`): created not yet open, it
   * opens and draws the order of those who entered (`wait`) at `open()` or
   * at `opens`.
   */
  draw?: boolean;
  /** A draw event's most offers per second (1..=1,000,000). */
  admit?: number;
  /**
   * A seated event: its layout (JSON text, or an object sent as JSON);
   * `total` must be its number of seats.
   */
  seats?: string | object;
  /** No `transfer` after this time (unix ms; default `closes`). */
  transferUntil?: number;
}

export interface ClaimOptions {
  /** Claim this many tickets, all or nothing; the reply is then an array. */
  count?: number;
  /** Hold them this many ms (overrides the event's default; 0 = sold). */
  hold?: number;
  /** A seated event: only rows of this section. */
  section?: string;
  /** A seated event: only rows of this category. */
  category?: string;
  /** A seated event: at least this many wheelchair spaces (none without it). */
  accessible?: number;
  /** A seated event: the best single seats when `count` are not together. */
  split?: boolean;
  /** A seated event: exactly these seat ids (`TicketGate.claimSeats`); sent last. */
  seats?: readonly number[];
  /** Claim only from this allocation (`FROM`). */
  from?: string;
  /** The allocation's key, when it was made with one. */
  key?: string;
}

export interface AllocateOptions {
  /** Set aside this many free tickets (on a seated event in `SPLIT` order). */
  count?: number;
  /** A seated event: only seats of this section. */
  section?: string;
  /** A seated event: only seats of this category. */
  category?: string;
  /** Exactly these seat ids; sent last. */
  seats?: readonly number[];
  /** The secret a claim `from` this allocation must give. */
  key?: string;
  /** Unix ms: what is still free then goes back to public sale. */
  release?: number;
}

export interface ReleaseOptions {
  /** Release the `count` lowest free tickets (default all). */
  count?: number;
  /** Release exactly these tickets; sent last. */
  seats?: readonly number[];
}

export interface TransferOptions {
  /** Move only these tickets of `from` (default all of them); sent last. */
  tickets?: readonly number[];
}

export interface ResellOptions {
  /** List only these tickets of the user's (default all not listed yet); sent last. */
  tickets?: readonly number[];
}

export interface UnlistOptions {
  /** Take back only these listed tickets (default all no buyer holds); sent last. */
  tickets?: readonly number[];
}

export interface ScanOptions {
  /** The gate the ticket is scanned at (1-32 bytes of `[A-Za-z0-9_.-]`). */
  gate?: string;
}

export interface WaitOptions {
  count?: number;
}

export interface DropOptions {
  /** Drop even while the log has entries the sidecar has not drained. */
  force?: boolean;
}

function options(pairs: [string, number | undefined][]): string[] {
  const out: string[] = [];
  for (const [word, value] of pairs) {
    if (value !== undefined && value !== null) out.push(word, String(value));
  }
  return out;
}

function words(pairs: [string, string | undefined][]): string[] {
  return pairs.flatMap(([word, value]) => (value === undefined ? [] : [word, value]));
}

/** `SEATS id ...`, sent last: the module takes every id after it. */
function seatIds(seats: readonly number[] | undefined): string[] {
  return seats === undefined ? [] : ["SEATS", ...seats.map(String)];
}

function write<T>(args: string[], parse: (r: replies.Reply) => T): Call<T> {
  return { args, readonly: false, parse };
}

function read<T>(args: string[], parse: (r: replies.Reply) => T): Call<T> {
  return { args, readonly: true, parse };
}

export function init(event: string, total: number, o: InitOptions = {}): Call<void> {
  const opts = options([
    ["OPENS", o.opens],
    ["CLOSES", o.closes],
    ["HOLD", o.hold],
    ["LIMIT", o.limit],
    ["OFFER", o.offer],
  ]);
  if (o.draw) opts.push("DRAW");
  opts.push(
    ...options([
      ["ADMIT", o.admit],
      ["TRANSFER_UNTIL", o.transferUntil],
    ]),
  );
  if (o.seats !== undefined) {
    opts.push("SEATS", typeof o.seats === "string" ? o.seats : JSON.stringify(o.seats));
  }
  return write(["ticket.init", event, String(total), ...opts], replies.parseOk);
}

export function open(event: string): Call<void> {
  return write(["ticket.open", event], replies.parseOk);
}

export function close(event: string): Call<void> {
  return write(["ticket.close", event], replies.parseOk);
}

function seated(o: ClaimOptions): boolean {
  return (
    o.section !== undefined ||
    o.category !== undefined ||
    o.accessible !== undefined ||
    o.split === true ||
    o.seats !== undefined ||
    o.from !== undefined
  );
}

export function claim(event: string, user: string, o: ClaimOptions = {}): Call<number | number[]> {
  if (o.count === undefined && o.hold === undefined && !seated(o)) {
    return { args: ["ticket.claim", event, user], readonly: false, parse: replies.parseInteger };
  }
  const opts = options([
    ["COUNT", o.count],
    ["HOLD", o.hold],
  ]);
  opts.push(
    ...words([
      ["SECTION", o.section],
      ["CATEGORY", o.category],
    ]),
  );
  opts.push(...options([["ACCESSIBLE", o.accessible]]));
  if (o.split) opts.push("SPLIT");
  opts.push(
    ...words([
      ["FROM", o.from],
      ["KEY", o.key],
    ]),
    ...seatIds(o.seats),
  );
  const parse: (r: replies.Reply) => number | number[] =
    o.count === undefined && o.seats === undefined ? replies.parseInteger : replies.parseTickets;
  return write(["ticket.claim", event, user, ...opts], parse);
}

export function layout(event: string): Call<replies.Layout | null> {
  return read(["ticket.layout", event], replies.parseLayout);
}

export function seatmap(event: string): Call<string | null> {
  return read(["ticket.seatmap", event], replies.parseSeatmap);
}

export function allocate(event: string, name: string, o: AllocateOptions = {}): Call<number[]> {
  const opts = [
    ...options([["COUNT", o.count]]),
    ...words([
      ["SECTION", o.section],
      ["CATEGORY", o.category],
      ["KEY", o.key],
    ]),
    ...options([["RELEASE", o.release]]),
    ...seatIds(o.seats),
  ];
  return write(["ticket.allocate", event, name, ...opts], replies.parseTickets);
}

export function release(event: string, name: string, o: ReleaseOptions = {}): Call<number> {
  const opts = [...options([["COUNT", o.count]]), ...seatIds(o.seats)];
  return write(["ticket.release", event, name, ...opts], replies.parseInteger);
}

export function allocations(event: string): Call<replies.Allocation[]> {
  return read(["ticket.allocations", event], replies.parseAllocations);
}

export function transfer(
  event: string,
  from: string,
  to: string,
  o: TransferOptions = {},
): Call<number> {
  return write(["ticket.transfer", event, from, to, ...ticketIds(o.tickets)], replies.parseInteger);
}

export function resell(event: string, user: string, o: ResellOptions = {}): Call<number> {
  return write(["ticket.resell", event, user, ...ticketIds(o.tickets)], replies.parseInteger);
}

export function unlist(event: string, user: string, o: UnlistOptions = {}): Call<number> {
  return write(["ticket.unlist", event, user, ...ticketIds(o.tickets)], replies.parseInteger);
}

/** `TICKETS id ...` when given (the module takes every id after it: sent last). */
function ticketIds(tickets: readonly number[] | undefined): string[] {
  return tickets === undefined ? [] : ["TICKETS", ...tickets.map(String)];
}

export function scan(event: string, ticket: number, gen: number, o: ScanOptions = {}): Call<void> {
  const opts = words([["GATE", o.gate]]);
  return write(["ticket.scan", event, String(ticket), String(gen), ...opts], replies.parseOk);
}

export function confirm(event: string, user: string): Call<number> {
  return write(["ticket.confirm", event, user], replies.parseInteger);
}

export function cancel(event: string, user: string): Call<number | null> {
  return write(["ticket.cancel", event, user], replies.parseOptionalInteger);
}

export function holder(event: string, user: string): Call<number | null> {
  return read(["ticket.holder", event, user], replies.parseOptionalInteger);
}

export function order(event: string, user: string): Call<replies.Order | null> {
  return read(["ticket.order", event, user], replies.parseOrder);
}

export function status(event: string): Call<replies.Status> {
  return read(["ticket.status", event], replies.parseStatus);
}

export function wait(event: string, user: string, o: WaitOptions = {}): Call<number> {
  const opts = options([["COUNT", o.count]]);
  return write(["ticket.wait", event, user, ...opts], replies.parseInteger);
}

export function leave(event: string, user: string): Call<boolean> {
  return write(["ticket.leave", event, user], replies.parseBool);
}

export function position(event: string, user: string): Call<number | null> {
  return read(["ticket.position", event, user], replies.parseOptionalInteger);
}

export function drop(event: string, o: DropOptions = {}): Call<number> {
  return write(["ticket.drop", event, ...(o.force ? ["FORCE"] : [])], replies.parseInteger);
}
