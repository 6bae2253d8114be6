/**
 * `TicketGate`: every `TICKET.*` command as a promise-returning method with
 * typed replies; error replies reject with a `TicketGateError` subclass.
 */
import * as commands from "./commands";
import type { Allocation, Layout, Order, Status } from "./replies";
import { type AnyClient } from "./transport";
export declare class TicketGate {
    #private;
    /** `client`: a node-redis 5 client or cluster, or an ioredis 5 `Redis` or `Cluster`. */
    constructor(client: AnyClient);
    /** Sends one prepared command and types its reply. */
    run<T>(call: commands.Call<T>): Promise<T>;
    /** Creates an event of `total` tickets (times in unix ms, durations in ms; `draw`, `admit`: a draw). */
    init(event: string, total: number, options?: commands.InitOptions): Promise<void>;
    open(event: string): Promise<void>;
    close(event: string): Promise<void>;
    /**
     * The user's ticket; with `count`, all the user's tickets, ascending (a
     * repeat claim answers the tickets the user has already). On a seated
     * event: the best `count` seats together (`NotTogetherError` if none are),
     * within `section`/`category`, with `accessible` wheelchair spaces;
     * `split` takes the best single seats when none are together. `from`:
     * only from that allocation, with its `key` (`NoKeyError` without it,
     * `SoldOutError` naming it when it has too few).
     */
    claim(event: string, user: string, options?: {
        hold?: number;
        section?: string;
        category?: string;
        from?: string;
        key?: string;
    }): Promise<number>;
    claim(event: string, user: string, options: Omit<commands.ClaimOptions, "seats"> & {
        count: number;
    }): Promise<number[]>;
    claim(event: string, user: string, options?: commands.ClaimOptions): Promise<number | number[]>;
    /**
     * Exactly these seats (ids; `layout()` names them) of a seated event:
     * `TakenError` if one is, `OrphanError` if they would leave a single seat
     * alone that another pick of the row would not.
     */
    claimSeats(event: string, user: string, seats: readonly number[], options?: {
        hold?: number;
        from?: string;
        key?: string;
    }): Promise<number[]>;
    /** A seated event's layout (`seatName(id)` names a seat); null if not seated. */
    layout(event: string): Promise<Layout | null>;
    /**
     * One character per seat id (index id - 1): `.` free, `h` held, `s` sold,
     * `a` free in an allocation; null if not seated.
     */
    seatmap(event: string): Promise<string | null>;
    /**
     * Operator: sets `count` free tickets (within `section`/`category`), or
     * exactly `seats`, aside in the allocation `name`, out of public sale;
     * claims take them with `{ from: name, key }`. `release` (unix ms): what
     * is left goes public then. The tickets allocated; `ShortError` if fewer
     * are free, `NoKeyError` adding with another key.
     */
    allocate(event: string, name: string, options?: commands.AllocateOptions): Promise<number[]>;
    /**
     * Operator: gives the allocation's free tickets (all, the `count` lowest,
     * or `seats`) back to public sale, the waiting list first; how many.
     */
    release(event: string, name: string, options?: commands.ReleaseOptions): Promise<number>;
    /** The event's allocations in name order (never their keys). */
    allocations(event: string): Promise<Allocation[]>;
    /**
     * Gives `from`'s sold tickets (all, or `tickets`) to `to` in one step, each
     * a generation up (`order().gens`); how many. `NotSoldError` (held, or not
     * the giver's), `UsedError` (scanned), `LimitError` (the receiver's),
     * `ClosedError` (after `TRANSFER_UNTIL`), `NoHoldError` (the giver has
     * none), `ListedError` (listed for resale: `unlist` first).
     */
    transfer(event: string, from: string, to: string, options?: commands.TransferOptions): Promise<number>;
    /**
     * Lists the user's sold tickets (all not listed yet, or `tickets`) for
     * resale at face value; how many. They stay the user's until a buyer
     * confirms one (a generation up). `ListedError` (listed already),
     * `NotSoldError` (held, or not the user's), `UsedError` (scanned),
     * `ClosedError` (after `TRANSFER_UNTIL`), `NoHoldError` (the user has none).
     */
    resell(event: string, user: string, options?: commands.ResellOptions): Promise<number>;
    /**
     * Takes back the user's listed tickets no buyer holds (all, or `tickets`);
     * how many (0: none listed). `NotListedError` (not listed by the user, or
     * held by a buyer).
     */
    unlist(event: string, user: string, options?: commands.UnlistOptions): Promise<number>;
    /**
     * Admits a ticket at the door: its first scan at its current generation
     * resolves; `UsedError` (scanned before), `StaleError` (transferred since:
     * an old credential), `NotSoldError` (free, held, listed).
     */
    scan(event: string, ticket: number, gen: number, options?: commands.ScanOptions): Promise<void>;
    /** Makes the user's held order sold; the number of tickets the user holds. */
    confirm(event: string, user: string): Promise<number>;
    /** Releases all the user's tickets (every one of a multi-ticket order); the lowest, or null. */
    cancel(event: string, user: string): Promise<number | null>;
    holder(event: string, user: string): Promise<number | null>;
    order(event: string, user: string): Promise<Order | null>;
    status(event: string): Promise<Status>;
    /**
     * Joins the waiting list: the 1-based position, 0 when offered at once, or
     * `ENTERED` (-1) when the user entered a draw not yet drawn.
     */
    wait(event: string, user: string, options?: commands.WaitOptions): Promise<number>;
    leave(event: string, user: string): Promise<boolean>;
    /** The 1-based place, 0 offered, `ENTERED` (-1) in a draw not yet drawn, null not on the list. */
    position(event: string, user: string): Promise<number | null>;
    /** Deletes the event's keys; the number deleted. */
    drop(event: string, options?: commands.DropOptions): Promise<number>;
}
