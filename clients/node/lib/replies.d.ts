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
export declare const ENTERED = -1;
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
export declare class Layout {
    readonly sections: Section[];
    constructor(sections: Section[]);
    /** The number of seats. */
    get total(): number;
    /** Every category, in layout order. */
    get categories(): string[];
    /** The seat of an id; throws a RangeError for an id not in the layout. */
    seat(id: number): Seat;
    /** `A-2-103`: section, row and label of a seat id. */
    seatName(id: number): string;
}
export type Reply = unknown;
export declare function text(reply: Reply): string;
export declare function parseInteger(reply: Reply): number;
export declare function parseOptionalInteger(reply: Reply): number | null;
export declare function parseOk(reply: Reply): void;
export declare function parseTickets(reply: Reply): number[];
export declare function parseBool(reply: Reply): boolean;
/** A map reply by field name: RESP3 object or `Map`, or RESP2 flat array. */
export declare function fields(reply: Reply): Map<string, Reply>;
export declare function parseStatus(reply: Reply): Status;
/** `TICKET.LAYOUT`'s JSON, or null for an event that is not seated. */
export declare function parseLayout(reply: Reply): Layout | null;
/** `TICKET.SEATMAP`: one character per seat id, `.` free, `h` held, `s` sold, `a` allocated. */
export declare function parseSeatmap(reply: Reply): string | null;
/** `TICKET.ALLOCATIONS`: `[name, free, claimed, release or nil]` per allocation. */
export declare function parseAllocations(reply: Reply): Allocation[];
export declare function parseOrder(reply: Reply): Order | null;
