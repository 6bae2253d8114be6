"use strict";
/**
 * The module's error replies as errors: one class per code under
 * `TicketGateError`, which carries the `code` (`SOLDOUT`) and the server's
 * `message` (the text after the code). node-redis (`ErrorReply`) and ioredis
 * (`ReplyError`) both keep the whole line in `message`; `fromReplyError`
 * splits it.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.ERRORS_BY_CODE = exports.IncompleteError = exports.NotRestoringError = exports.NotListedError = exports.ListedError = exports.StaleError = exports.UsedError = exports.NotSoldError = exports.NoAllocationError = exports.NoKeyError = exports.ShortError = exports.OrphanError = exports.TakenError = exports.NotTogetherError = exports.InternalError = exports.CorruptError = exports.WrongTypeError = exports.QueueError = exports.TryAgainError = exports.UnsyncedError = exports.HoldingError = exports.NoHoldError = exports.LimitError = exports.SoldOutError = exports.ClosedError = exports.NotOpenError = exports.ExistsError = exports.NoEventError = exports.InvalidError = exports.TicketGateError = void 0;
exports.isReplyError = isReplyError;
exports.errorFor = errorFor;
exports.fromReplyError = fromReplyError;
class TicketGateError extends Error {
    /** The code of this class's errors (`""` for the base). */
    static code = "";
    /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
    code;
    /** `code` is needed only for the base class (a code with no class of its own). */
    constructor(message, options = {}) {
        super(message, { cause: options.cause });
        const cls = new.target;
        this.code = options.code ?? cls.code;
        this.name = cls.name;
    }
}
exports.TicketGateError = TicketGateError;
/** `ERR`: malformed input (ids, numbers, options) or a wrong arity. */
class InvalidError extends TicketGateError {
    static code = "ERR";
}
exports.InvalidError = InvalidError;
/** The event does not exist. */
class NoEventError extends TicketGateError {
    static code = "NOEVENT";
}
exports.NoEventError = NoEventError;
/** `init` of an event that exists already. */
class ExistsError extends TicketGateError {
    static code = "EXISTS";
}
exports.ExistsError = ExistsError;
/** A claim before the event opens. */
class NotOpenError extends TicketGateError {
    static code = "NOTOPEN";
}
exports.NotOpenError = NotOpenError;
/** The event was closed, or its closing time has passed. */
class ClosedError extends TicketGateError {
    static code = "CLOSED";
}
exports.ClosedError = ClosedError;
/** Fewer free tickets than asked for (or others wait in line). */
class SoldOutError extends TicketGateError {
    static code = "SOLDOUT";
}
exports.SoldOutError = SoldOutError;
/** More tickets than the event allows one user. */
class LimitError extends TicketGateError {
    static code = "LIMIT";
}
exports.LimitError = LimitError;
/** `confirm` for a user who holds nothing (e.g. the hold expired). */
class NoHoldError extends TicketGateError {
    static code = "NOHOLD";
}
exports.NoHoldError = NoHoldError;
/** `wait` by a user who already holds tickets. */
class HoldingError extends TicketGateError {
    static code = "HOLDING";
}
exports.HoldingError = HoldingError;
/** `drop` while the event's log still has entries to drain. */
class UnsyncedError extends TicketGateError {
    static code = "UNSYNCED";
}
exports.UnsyncedError = UnsyncedError;
/** The event's keys are moving or being restored; nothing changed, retry. */
class TryAgainError extends TicketGateError {
    static code = "TRYAGAIN";
}
exports.TryAgainError = TryAgainError;
/**
 * A claim by a user without an offer while a draw event's drawn entrants
 * still wait: the event sells through its queue; `wait()`.
 */
class QueueError extends TicketGateError {
    static code = "QUEUE";
}
exports.QueueError = QueueError;
/** One of the event's keys holds another Redis type. */
class WrongTypeError extends TicketGateError {
    static code = "WRONGTYPE";
}
exports.WrongTypeError = WrongTypeError;
/** The event's keys hold values the module never writes. */
class CorruptError extends TicketGateError {
    static code = "CORRUPT";
}
exports.CorruptError = CorruptError;
/** A bug in the module, caught before it could harm Redis. */
class InternalError extends TicketGateError {
    static code = "INTERNAL";
}
exports.InternalError = InternalError;
/** A seated claim: no `count` seats together where allowed (`split` takes single seats). */
class NotTogetherError extends TicketGateError {
    static code = "NOTOGETHER";
}
exports.NotTogetherError = NotTogetherError;
/** A picked seat is held or sold. */
class TakenError extends TicketGateError {
    static code = "TAKEN";
}
exports.TakenError = TakenError;
/** The picked seats would leave a single seat alone that another pick of the row would not. */
class OrphanError extends TicketGateError {
    static code = "ORPHAN";
}
exports.OrphanError = OrphanError;
/** `allocate` (or `release` with a count) asked for more than is free; nothing changed. */
class ShortError extends TicketGateError {
    static code = "SHORT";
}
exports.ShortError = ShortError;
/** A claim from an allocation without its key (or a wrong one), or allocating again with another key. */
class NoKeyError extends TicketGateError {
    static code = "NOKEY";
}
exports.NoKeyError = NoKeyError;
/** The event has no allocation of that name. */
class NoAllocationError extends TicketGateError {
    static code = "NOALLOCATION";
}
exports.NoAllocationError = NoAllocationError;
/** `transfer` or `scan` of a ticket that is not sold: free, held, listed, or not the giver's. */
class NotSoldError extends TicketGateError {
    static code = "NOTSOLD";
}
exports.NotSoldError = NotSoldError;
/** `scan` of a ticket scanned already (the message says when and at which gate), or its `transfer`. */
class UsedError extends TicketGateError {
    static code = "USED";
}
exports.UsedError = UsedError;
/** `scan` at a generation that is not the ticket's: it was transferred since. */
class StaleError extends TicketGateError {
    static code = "STALE";
}
exports.StaleError = StaleError;
/** `resell` of a ticket listed already, or `transfer` (or `cancel`) of one listed for resale. */
class ListedError extends TicketGateError {
    static code = "LISTED";
}
exports.ListedError = ListedError;
/** `unlist` of a ticket that is not listed by the user, or that a buyer holds. */
class NotListedError extends TicketGateError {
    static code = "NOTLISTED";
}
exports.NotListedError = NotListedError;
/** A restore step on an event that is not being restored. */
class NotRestoringError extends TicketGateError {
    static code = "NOTRESTORING";
}
exports.NotRestoringError = NotRestoringError;
/** A restore committed before all of it was sent. */
class IncompleteError extends TicketGateError {
    static code = "INCOMPLETE";
}
exports.IncompleteError = IncompleteError;
exports.ERRORS_BY_CODE = new Map([
    InvalidError,
    NoEventError,
    ExistsError,
    NotOpenError,
    ClosedError,
    SoldOutError,
    NotTogetherError,
    TakenError,
    OrphanError,
    ShortError,
    NoKeyError,
    NoAllocationError,
    NotSoldError,
    UsedError,
    StaleError,
    ListedError,
    NotListedError,
    LimitError,
    NoHoldError,
    HoldingError,
    UnsyncedError,
    TryAgainError,
    QueueError,
    WrongTypeError,
    CorruptError,
    InternalError,
    NotRestoringError,
    IncompleteError,
].map((cls) => [cls.code, cls]));
/** Error classes of the Redis clients for a server's error reply. */
const REPLY_ERROR_NAMES = new Set(["ErrorReply", "SimpleError", "BlobError", "ReplyError"]);
/** Whether `err` is a Redis error reply (not a connection or client error). */
function isReplyError(err) {
    return err instanceof Error && REPLY_ERROR_NAMES.has(err.constructor.name);
}
/** The error for one error line (`SOLDOUT event 'e1' is sold out`). */
function errorFor(line, cause) {
    const space = line.indexOf(" ");
    const code = space < 0 ? line : line.slice(0, space);
    const message = space < 0 ? "" : line.slice(space + 1);
    const cls = exports.ERRORS_BY_CODE.get(code);
    return cls ? new cls(message, { cause }) : new TicketGateError(message, { code, cause });
}
/**
 * ioredis's Cluster retries TRYAGAIN on a random node (following the MOVED
 * that earns) up to 16 times, then rejects with a plain Error naming the last
 * reply error: TRYAGAIN, or a redirection. Either way the command did not
 * run, so it becomes `TryAgainError`.
 */
const IOREDIS_GAVE_UP = "Too many Cluster redirections. Last error: ReplyError: ";
const REDIRECTIONS = new Set(["MOVED", "ASK", "CLUSTERDOWN"]);
/** Maps a client's error: reply errors become ours, anything else is kept. */
function fromReplyError(err) {
    if (isReplyError(err))
        return errorFor(err.message, err);
    if (err instanceof Error && err.message.startsWith(IOREDIS_GAVE_UP)) {
        const last = errorFor(err.message.slice(IOREDIS_GAVE_UP.length), err);
        if (!REDIRECTIONS.has(last.code))
            return last;
        return new TryAgainError(`the cluster client gave up after 16 tries: ${err.message}`, {
            cause: err,
        });
    }
    return err;
}
