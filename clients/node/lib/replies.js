"use strict";
/**
 * Typed replies (`Status`, `Order`, `Layout`) and the functions that turn what
 * node-redis or ioredis decoded (RESP2 flat arrays or RESP3 maps as objects
 * or `Map`s; numbers as numbers, bigints or strings) into them.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.Layout = exports.ENTERED = void 0;
exports.text = text;
exports.parseInteger = parseInteger;
exports.parseOptionalInteger = parseOptionalInteger;
exports.parseOk = parseOk;
exports.parseTickets = parseTickets;
exports.parseBool = parseBool;
exports.fields = fields;
exports.parseStatus = parseStatus;
exports.parseLayout = parseLayout;
exports.parseSeatmap = parseSeatmap;
exports.parseAllocations = parseAllocations;
exports.parseOrder = parseOrder;
/**
 * `wait` and `position` of a draw event before its draw: the user entered the
 * draw and has no place yet. Not a place (n >= 1), not 0 (offered), not null
 * (not on the list).
 */
exports.ENTERED = -1;
/** `TICKET.LAYOUT`: seat ids `1..total` in layout order (section, row, position). */
class Layout {
    sections;
    constructor(sections) {
        this.sections = sections;
    }
    /** The number of seats. */
    get total() {
        let n = 0;
        for (const s of this.sections)
            for (const r of s.rows)
                n += r.seats - r.blocked.length;
        return n;
    }
    /** Every category, in layout order. */
    get categories() {
        return [...new Set(this.sections.flatMap((s) => s.rows.map((r) => r.category)))];
    }
    /** The seat of an id; throws a RangeError for an id not in the layout. */
    seat(id) {
        for (const section of this.sections) {
            for (const row of section.rows) {
                const n = id - row.firstId;
                if (n < 0 || n >= row.seats - row.blocked.length)
                    continue;
                const positions = [];
                for (let p = 1; p <= row.seats; p++)
                    if (!row.blocked.includes(p))
                        positions.push(p);
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
    seatName(id) {
        return this.seat(id).name;
    }
}
exports.Layout = Layout;
function fail(what, reply) {
    throw new TypeError(`ticketgate: expected ${what}, got ${JSON.stringify(String(reply))}`);
}
function text(reply) {
    if (typeof reply === "string")
        return reply;
    if (reply instanceof Uint8Array)
        return Buffer.from(reply).toString("utf8");
    return fail("a string", reply);
}
function parseInteger(reply) {
    if (typeof reply === "number" && Number.isInteger(reply))
        return reply;
    if (typeof reply === "bigint")
        return Number(reply);
    if (typeof reply === "string" && /^-?\d+$/.test(reply))
        return Number(reply);
    return fail("an integer", reply);
}
function parseOptionalInteger(reply) {
    return reply === null || reply === undefined ? null : parseInteger(reply);
}
function parseOk(reply) {
    if (reply !== "OK" && !(reply instanceof Uint8Array && text(reply) === "OK"))
        fail("OK", reply);
}
function parseTickets(reply) {
    if (!Array.isArray(reply))
        return fail("an array of tickets", reply);
    return reply.map(parseInteger);
}
function parseBool(reply) {
    return parseInteger(reply) !== 0;
}
/** A map reply by field name: RESP3 object or `Map`, or RESP2 flat array. */
function fields(reply) {
    if (reply instanceof Map)
        return new Map([...reply].map(([k, v]) => [text(k), v]));
    if (Array.isArray(reply) && reply.length % 2 === 0) {
        const out = new Map();
        for (let i = 0; i < reply.length; i += 2)
            out.set(text(reply[i]), reply[i + 1]);
        return out;
    }
    if (reply !== null && typeof reply === "object")
        return new Map(Object.entries(reply));
    return fail("a map", reply);
}
function field(f, name) {
    if (!f.has(name))
        throw new TypeError(`ticketgate: the reply has no field ${name}`);
    return f.get(name);
}
function parseStatus(reply) {
    const f = fields(reply);
    const int = (name) => parseInteger(field(f, name));
    const status = {
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
    for (const name of ["draw", "seed"]) {
        const value = f.get(name);
        if (value != null)
            status[name] = typeof value === "number" ? String(value) : text(value);
    }
    const admit = f.get("admit");
    if (admit != null)
        status.admit = parseInteger(admit);
    const categories = f.get("categories");
    if (categories != null)
        status.categories = parseCategories(categories);
    for (const name of ["accessible", "allocated"]) {
        const value = f.get(name);
        if (value != null)
            status[name] = parseInteger(value);
    }
    return status;
}
/** STATUS's `categories`: `category, free, ...` (or a map) in layout order. */
function parseCategories(reply) {
    const out = new Map();
    for (const [name, free] of fields(reply))
        out.set(name, parseInteger(free));
    return out;
}
/** `TICKET.LAYOUT`'s JSON, or null for an event that is not seated. */
function parseLayout(reply) {
    if (reply === null || reply === undefined)
        return null;
    const doc = JSON.parse(text(reply));
    return new Layout(doc.sections.map((s) => ({
        name: s.name,
        category: s.category,
        rows: s.rows.map(({ first_id, ...row }) => ({ ...row, firstId: first_id })),
    })));
}
/** `TICKET.SEATMAP`: one character per seat id, `.` free, `h` held, `s` sold, `a` allocated. */
function parseSeatmap(reply) {
    return reply === null || reply === undefined ? null : text(reply);
}
/** `TICKET.ALLOCATIONS`: `[name, free, claimed, release or nil]` per allocation. */
function parseAllocations(reply) {
    if (!Array.isArray(reply))
        return fail("an array of allocations", reply);
    return reply.map((entry) => {
        if (!Array.isArray(entry) || entry.length !== 4)
            return fail("an allocation", entry);
        const [name, free, claimed, release] = entry;
        return {
            name: text(name),
            free: parseInteger(free),
            claimed: parseInteger(claimed),
            release: parseOptionalInteger(release),
        };
    });
}
function parseOrder(reply) {
    if (reply === null || reply === undefined)
        return null;
    const f = fields(reply);
    const state = text(field(f, "state"));
    if (state !== "held" && state !== "sold")
        return fail("held or sold", state);
    return {
        tickets: parseTickets(field(f, "tickets")),
        state,
        expiresAt: parseInteger(field(f, "expires_at")),
        ...(f.has("seats") ? { seats: field(f, "seats").map(text) } : {}),
        gens: f.has("gens") ? field(f, "gens").map(parseInteger) : [],
    };
}
