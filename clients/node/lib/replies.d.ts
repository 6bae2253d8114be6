/**
 * Typed replies (`Status`, `Order`) and the functions that turn what
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
}
/** `TICKET.ORDER`: a user's tickets and whether they are held or sold. */
export interface Order {
    tickets: number[];
    /** `held` or `sold`. */
    state: "held" | "sold";
    /** Unix ms of a hold's deadline, 0 when sold. */
    expiresAt: number;
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
export declare function parseOrder(reply: Reply): Order | null;
