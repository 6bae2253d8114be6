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
export declare function init(event: string, total: number, o?: InitOptions): Call<void>;
export declare function open(event: string): Call<void>;
export declare function close(event: string): Call<void>;
export declare function claim(event: string, user: string, o?: ClaimOptions): Call<number | number[]>;
export declare function layout(event: string): Call<replies.Layout | null>;
export declare function seatmap(event: string): Call<string | null>;
export declare function allocate(event: string, name: string, o?: AllocateOptions): Call<number[]>;
export declare function release(event: string, name: string, o?: ReleaseOptions): Call<number>;
export declare function allocations(event: string): Call<replies.Allocation[]>;
export declare function transfer(event: string, from: string, to: string, o?: TransferOptions): Call<number>;
export declare function resell(event: string, user: string, o?: ResellOptions): Call<number>;
export declare function unlist(event: string, user: string, o?: UnlistOptions): Call<number>;
export declare function scan(event: string, ticket: number, gen: number, o?: ScanOptions): Call<void>;
export declare function confirm(event: string, user: string): Call<number>;
export declare function cancel(event: string, user: string): Call<number | null>;
export declare function holder(event: string, user: string): Call<number | null>;
export declare function order(event: string, user: string): Call<replies.Order | null>;
export declare function status(event: string): Call<replies.Status>;
export declare function wait(event: string, user: string, o?: WaitOptions): Call<number>;
export declare function leave(event: string, user: string): Call<boolean>;
export declare function position(event: string, user: string): Call<number | null>;
export declare function drop(event: string, o?: DropOptions): Call<number>;
