/**
 * The module's error replies as errors: one class per code under
 * `TicketGateError`, which carries the `code` (`SOLDOUT`) and the server's
 * `message` (the text after the code). node-redis (`ErrorReply`) and ioredis
 * (`ReplyError`) both keep the whole line in `message`; `fromReplyError`
 * splits it.
 */
export declare class TicketGateError extends Error {
    /** The code of this class's errors (`""` for the base). */
    static readonly code: string;
    /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
    readonly code: string;
    /** `code` is needed only for the base class (a code with no class of its own). */
    constructor(message: string, options?: {
        code?: string;
        cause?: unknown;
    });
}
/** `ERR`: malformed input (ids, numbers, options) or a wrong arity. */
export declare class InvalidError extends TicketGateError {
    static readonly code = "ERR";
}
/** The event does not exist. */
export declare class NoEventError extends TicketGateError {
    static readonly code = "NOEVENT";
}
/** `init` of an event that exists already. */
export declare class ExistsError extends TicketGateError {
    static readonly code = "EXISTS";
}
/** A claim before the event opens. */
export declare class NotOpenError extends TicketGateError {
    static readonly code = "NOTOPEN";
}
/** The event was closed, or its closing time has passed. */
export declare class ClosedError extends TicketGateError {
    static readonly code = "CLOSED";
}
/** Fewer free tickets than asked for (or others wait in line). */
export declare class SoldOutError extends TicketGateError {
    static readonly code = "SOLDOUT";
}
/** More tickets than the event allows one user. */
export declare class LimitError extends TicketGateError {
    static readonly code = "LIMIT";
}
/** `confirm` for a user who holds nothing (e.g. the hold expired). */
export declare class NoHoldError extends TicketGateError {
    static readonly code = "NOHOLD";
}
/** `wait` by a user who already holds tickets. */
export declare class HoldingError extends TicketGateError {
    static readonly code = "HOLDING";
}
/** `drop` while the event's log still has entries to drain. */
export declare class UnsyncedError extends TicketGateError {
    static readonly code = "UNSYNCED";
}
/** The event's keys are moving or being restored; nothing changed, retry. */
export declare class TryAgainError extends TicketGateError {
    static readonly code = "TRYAGAIN";
}
/**
 * A claim by a user without an offer while a draw event's drawn entrants
 * still wait: the event sells through its queue; `wait()`.
 */
export declare class QueueError extends TicketGateError {
    static readonly code = "QUEUE";
}
/** One of the event's keys holds another Redis type. */
export declare class WrongTypeError extends TicketGateError {
    static readonly code = "WRONGTYPE";
}
/** The event's keys hold values the module never writes. */
export declare class CorruptError extends TicketGateError {
    static readonly code = "CORRUPT";
}
/** A bug in the module, caught before it could harm Redis. */
export declare class InternalError extends TicketGateError {
    static readonly code = "INTERNAL";
}
/** A seated claim: no `count` seats together where allowed (`split` takes single seats). */
export declare class NotTogetherError extends TicketGateError {
    static readonly code = "NOTOGETHER";
}
/** A picked seat is held or sold. */
export declare class TakenError extends TicketGateError {
    static readonly code = "TAKEN";
}
/** The picked seats would leave a single seat alone that another pick of the row would not. */
export declare class OrphanError extends TicketGateError {
    static readonly code = "ORPHAN";
}
/** `allocate` (or `release` with a count) asked for more than is free; nothing changed. */
export declare class ShortError extends TicketGateError {
    static readonly code = "SHORT";
}
/** A claim from an allocation without its key (or a wrong one), or allocating again with another key. */
export declare class NoKeyError extends TicketGateError {
    static readonly code = "NOKEY";
}
/** The event has no allocation of that name. */
export declare class NoAllocationError extends TicketGateError {
    static readonly code = "NOALLOCATION";
}
/** `transfer` or `scan` of a ticket that is not sold: free, held, listed, or not the giver's. */
export declare class NotSoldError extends TicketGateError {
    static readonly code = "NOTSOLD";
}
/** `scan` of a ticket scanned already (the message says when and at which gate), or its `transfer`. */
export declare class UsedError extends TicketGateError {
    static readonly code = "USED";
}
/** `scan` at a generation that is not the ticket's: it was transferred since. */
export declare class StaleError extends TicketGateError {
    static readonly code = "STALE";
}
/** `resell` of a ticket listed already, or `transfer` (or `cancel`) of one listed for resale. */
export declare class ListedError extends TicketGateError {
    static readonly code = "LISTED";
}
/** `unlist` of a ticket that is not listed by the user, or that a buyer holds. */
export declare class NotListedError extends TicketGateError {
    static readonly code = "NOTLISTED";
}
/** A restore step on an event that is not being restored. */
export declare class NotRestoringError extends TicketGateError {
    static readonly code = "NOTRESTORING";
}
/** A restore committed before all of it was sent. */
export declare class IncompleteError extends TicketGateError {
    static readonly code = "INCOMPLETE";
}
export type TicketGateErrorClass = typeof TicketGateError;
export declare const ERRORS_BY_CODE: ReadonlyMap<string, TicketGateErrorClass>;
/** Whether `err` is a Redis error reply (not a connection or client error). */
export declare function isReplyError(err: unknown): err is Error;
/** The error for one error line (`SOLDOUT event 'e1' is sold out`). */
export declare function errorFor(line: string, cause?: unknown): TicketGateError;
/** Maps a client's error: reply errors become ours, anything else is kept. */
export declare function fromReplyError(err: unknown): unknown;
