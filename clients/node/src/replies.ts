/**
 * Typed replies (`Status`, `Order`, `Layout`) and the functions that turn what
 * node-redis or ioredis decoded (RESP2 flat arrays or RESP3 maps as objects
 * or `Map`s; numbers as numbers, bigints or strings) into them.
 */

/**
 * `wait` and `position` of a draw event before its draw: the user entered the
 * draw and has no place yet. Not a place (n >= 1), not 0 (offered), not null
 * (not on the list).
 */
export const ENTERED = -1;

/** `TICKET.STATUS`: an event's counts, state and window. */
export interface Status {
  total: number;
  /** Free tickets. */
  remaining: number;
  /** Tickets held or sold. */
  claimed: number;
  /** `open`, `closed` or `restoring`. */
  status: string;
  /** Unix ms, 0 = none. */
  opensAt: number;
  /** Unix ms, 0 = none. */
  closesAt: number;
  /** Log entries the sidecar has not drained yet. */
  unsynced: number;
  /** Tickets in live holds. */
  held: number;
  /** Length of the waiting list. */
  waiting: number;
  /** 16 hex digits; null for events made before 0.3. */
  incarnation: string | null;
  /** A draw event's commitment, hex(SHA-256(seed)), published from the start. */
  draw?: string;
  /** A draw event's seed (64 hex digits), once drawn. */
  seed?: string;
  /** A draw event's most offers per second, when set. */
  admit?: number;
  /** A seated event's free seats per category, in layout order (every category). */
  categories?: Map<string, number>;
  /** A seated event's free wheelchair spaces. */
  accessible?: number;
  /** Free allocated tickets (not in `remaining`), when there are any. */
  allocated?: number;
  /** Tickets listed for resale that no buyer holds (in `claimed`); 0 when none. */
  resale: number;
}

/** One entry of `TICKET.ALLOCATIONS` (never its key). */
export interface Allocation {
  name: string;
  /** Tickets not claimed yet. */
  free: number;
  /** Tickets claimed from it (held or sold). */
  claimed: number;
  /** Unix ms it gives its free tickets back to public sale; null = never. */
  release: number | null;
}

/** `TICKET.ORDER`: a user's tickets and whether they are held or sold. */
export interface Order {
  tickets: number[];
  /** `held` or `sold`. */
  state: "held" | "sold";
  /** Unix ms of a hold's deadline, 0 when sold. */
  expiresAt: number;
  /** A seated event's seat names (`A-2-103`), in ticket order. */
  seats?: string[];
  /**
   * Each ticket's generation, in ticket order: 1 at sale, one up per
   * transfer. A ticket's door credential is (event, ticket, gen).
   */
  gens: number[];
}

/** One row of a seated event's layout, as stored (every default filled in). */
export interface Row {
  name: string;
  /** Positions, blocked ones included. */
  seats: number;
  /** The label of position 1. */
  first: number;
  /** Positions with no seat. */
  blocked: number[];
  /** Wheelchair spaces (positions). */
  accessible: number[];
  /** Lower is better. */
  rank: number;
  /** The best position. */
  center: number;
  category: string;
  /** The seat id of the row's first seat. */
  firstId: number;
}

export interface Section {
  name: string;
  category: string;
  rows: Row[];
}

/** Where a seat id is; `name` is `<section>-<row>-<label>`. */
export interface Seat {
  id: number;
  name: string;
  section: string;
  row: string;
  /** 1-based position in the row. */
  position: number;
  label: number;
  category: string;
  accessible: boolean;
}

/** `TICKET.LAYOUT`: seat ids `1..total` in layout order (section, row, position). */
export class Layout {
  constructor(readonly sections: Section[]) {}

  /** The number of seats. */
  get total(): number {
    let n = 0;
    for (const s of this.sections) for (const r of s.rows) n += r.seats - r.blocked.length;
    return n;
  }

  /** Every category, in layout order. */
  get categories(): string[] {
    return [...new Set(this.sections.flatMap((s) => s.rows.map((r) => r.category)))];
  }

  /** The seat of an id; throws a RangeError for an id not in the layout. */
  seat(id: number): Seat {
    for (const section of this.sections) {
      for (const row of section.rows) {
        const n = id - row.firstId;
        if (n < 0 || n >= row.seats - row.blocked.length) continue;
        const positions = [];
        for (let p = 1; p <= row.seats; p++) if (!row.blocked.includes(p)) positions.push(p);
        const position = positions[n];
        const label = row.first + position - 1;
        return {
          id,
          name: `${section.name}-${row.name}-${label}`,
          section: section.name,
          row: row.name,
          position,
          label,
          category: row.category,
          accessible: row.accessible.includes(position),
        };
      }
    }
    throw new RangeError(`ticketgate: seat id ${id} is not in the layout`);
  }

  /** `A-2-103`: section, row and label of a seat id. */
  seatName(id: number): string {
    return this.seat(id).name;
  }
}

export type Reply = unknown;

function fail(what: string, reply: Reply): never {
  throw new TypeError(`ticketgate: expected ${what}, got ${JSON.stringify(String(reply))}`);
}

export function text(reply: Reply): string {
  if (typeof reply === "string") return reply;
  if (reply instanceof Uint8Array) return Buffer.from(reply).toString("utf8");
  return fail("a string", reply);
}

export function parseInteger(reply: Reply): number {
  if (typeof reply === "number" && Number.isInteger(reply)) return reply;
  if (typeof reply === "bigint") return Number(reply);
  if (typeof reply === "string" && /^-?\d+$/.test(reply)) return Number(reply);
  return fail("an integer", reply);
}

export function parseOptionalInteger(reply: Reply): number | null {
  return reply === null || reply === undefined ? null : parseInteger(reply);
}

export function parseOk(reply: Reply): void {
  if (reply !== "OK" && !(reply instanceof Uint8Array && text(reply) === "OK")) fail("OK", reply);
}

export function parseTickets(reply: Reply): number[] {
  if (!Array.isArray(reply)) return fail("an array of tickets", reply);
  return reply.map(parseInteger);
}

export function parseBool(reply: Reply): boolean {
  return parseInteger(reply) !== 0;
}

/** A map reply by field name: RESP3 object or `Map`, or RESP2 flat array. */
export function fields(reply: Reply): Map<string, Reply> {
  if (reply instanceof Map) return new Map([...reply].map(([k, v]) => [text(k), v]));
  if (Array.isArray(reply) && reply.length % 2 === 0) {
    const out = new Map<string, Reply>();
    for (let i = 0; i < reply.length; i += 2) out.set(text(reply[i]), reply[i + 1]);
    return out;
  }
  if (reply !== null && typeof reply === "object") return new Map(Object.entries(reply));
  return fail("a map", reply);
}

function field(f: Map<string, Reply>, name: string): Reply {
  if (!f.has(name)) throw new TypeError(`ticketgate: the reply has no field ${name}`);
  return f.get(name);
}

export function parseStatus(reply: Reply): Status {
  const f = fields(reply);
  const int = (name: string) => parseInteger(field(f, name));
  const status: Status = {
    total: int("total"),
    remaining: int("remaining"),
    claimed: int("claimed"),
    status: text(field(f, "status")),
    opensAt: int("opens_at"),
    closesAt: int("closes_at"),
    unsynced: int("unsynced"),
    held: int("held"),
    waiting: int("waiting"),
    incarnation: f.get("incarnation") == null ? null : text(f.get("incarnation")),
    resale: f.get("resale") == null ? 0 : parseInteger(f.get("resale")),
  };
  for (const name of ["draw", "seed"] as const) {
    const value = f.get(name);
    if (value != null) status[name] = typeof value === "number" ? String(value) : text(value);
  }
  const admit = f.get("admit");
  if (admit != null) status.admit = parseInteger(admit);
  const categories = f.get("categories");
  if (categories != null) status.categories = parseCategories(categories);
  for (const name of ["accessible", "allocated"] as const) {
    const value = f.get(name);
    if (value != null) status[name] = parseInteger(value);
  }
  return status;
}

/** STATUS's `categories`: `category, free, ...` (or a map) in layout order. */
function parseCategories(reply: Reply): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, free] of fields(reply)) out.set(name, parseInteger(free));
  return out;
}

interface StoredRow extends Omit<Row, "firstId"> {
  first_id: number;
}

/** `TICKET.LAYOUT`'s JSON, or null for an event that is not seated. */
export function parseLayout(reply: Reply): Layout | null {
  if (reply === null || reply === undefined) return null;
  const doc = JSON.parse(text(reply)) as {
    sections: { name: string; category: string; rows: StoredRow[] }[];
  };
  return new Layout(
    doc.sections.map((s) => ({
      name: s.name,
      category: s.category,
      rows: s.rows.map(({ first_id, ...row }) => ({ ...row, firstId: first_id })),
    })),
  );
}

/** `TICKET.SEATMAP`: one character per seat id, `.` free, `h` held, `s` sold, `a` allocated. */
export function parseSeatmap(reply: Reply): string | null {
  return reply === null || reply === undefined ? null : text(reply);
}

/** `TICKET.ALLOCATIONS`: `[name, free, claimed, release or nil]` per allocation. */
export function parseAllocations(reply: Reply): Allocation[] {
  if (!Array.isArray(reply)) return fail("an array of allocations", reply);
  return reply.map((entry: Reply) => {
    if (!Array.isArray(entry) || entry.length !== 4) return fail("an allocation", entry);
    const [name, free, claimed, release] = entry as Reply[];
    return {
      name: text(name),
      free: parseInteger(free),
      claimed: parseInteger(claimed),
      release: parseOptionalInteger(release),
    };
  });
}

export function parseOrder(reply: Reply): Order | null {
  if (reply === null || reply === undefined) return null;
  const f = fields(reply);
  const state = text(field(f, "state"));
  if (state !== "held" && state !== "sold") return fail("held or sold", state);
  return {
    tickets: parseTickets(field(f, "tickets")),
    state,
    expiresAt: parseInteger(field(f, "expires_at")),
    ...(f.has("seats") ? { seats: (field(f, "seats") as Reply[]).map(text) } : {}),
    gens: f.has("gens") ? (field(f, "gens") as Reply[]).map(parseInteger) : [],
  };
}
