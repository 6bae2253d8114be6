"use strict";
/**
 * The module's error replies as errors: one class per code under
 * `TicketGateError`, which carries the `code` (`SOLDOUT`) and the server's
 * `message` (the text after the code). node-redis (`ErrorReply`) and ioredis
 * (`ReplyError`) both keep the whole line in `message`; `fromReplyError`
 * splits it.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.ERRORS_BY_CODE = exports.IncompleteError = exports.NotRestoringError = exports.InternalError = exports.CorruptError = exports.WrongTypeError = exports.QueueError = exports.TryAgainError = exports.UnsyncedError = exports.HoldingError = exports.NoHoldError = exports.LimitError = exports.SoldOutError = exports.ClosedError = exports.NotOpenError = exports.ExistsError = exports.NoEventError = exports.InvalidError = exports.TicketGateError = void 0;
exports.isReplyError = isReplyError;
exports.errorFor = errorFor;
exports.fromReplyError = fromReplyError;
class TicketGateError extends Error {
    /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
    code;
    constructor(code, message, options) {
        super(message, options);
        this.code = code;
        this.name = "TicketGateError";
    }
}
exports.TicketGateError = TicketGateError;
function errorClass(code, name) {
    const cls = class extends TicketGateError {
        static code = code;
        constructor(message, options) {
            super(code, message, options);
            this.name = name;
        }
    };
    Object.defineProperty(cls, "name", { value: name });
    return cls;
}
/** `ERR`: malformed input (ids, numbers, options) or a wrong arity. */
exports.InvalidError = errorClass("ERR", "InvalidError");
/** The event does not exist. */
exports.NoEventError = errorClass("NOEVENT", "NoEventError");
/** `init` of an event that exists already. */
exports.ExistsError = errorClass("EXISTS", "ExistsError");
/** A claim before the event opens. */
exports.NotOpenError = errorClass("NOTOPEN", "NotOpenError");
/** The event was closed, or its closing time has passed. */
exports.ClosedError = errorClass("CLOSED", "ClosedError");
/** Fewer free tickets than asked for (or others wait in line). */
exports.SoldOutError = errorClass("SOLDOUT", "SoldOutError");
/** More tickets than the event allows one user. */
exports.LimitError = errorClass("LIMIT", "LimitError");
/** `confirm` for a user who holds nothing (e.g. the hold expired). */
exports.NoHoldError = errorClass("NOHOLD", "NoHoldError");
/** `wait` by a user who already holds tickets. */
exports.HoldingError = errorClass("HOLDING", "HoldingError");
/** `drop` while the event's log still has entries to drain. */
exports.UnsyncedError = errorClass("UNSYNCED", "UnsyncedError");
/** The event's keys are moving or being restored; nothing changed, retry. */
exports.TryAgainError = errorClass("TRYAGAIN", "TryAgainError");
/** The event admits buyers through its queue (the draw). */
exports.QueueError = errorClass("QUEUE", "QueueError");
/** One of the event's keys holds another Redis type. */
exports.WrongTypeError = errorClass("WRONGTYPE", "WrongTypeError");
/** The event's keys hold values the module never writes. */
exports.CorruptError = errorClass("CORRUPT", "CorruptError");
/** A bug in the module, caught before it could harm Redis. */
exports.InternalError = errorClass("INTERNAL", "InternalError");
/** A restore step on an event that is not being restored. */
exports.NotRestoringError = errorClass("NOTRESTORING", "NotRestoringError");
/** A restore committed before all of it was sent. */
exports.IncompleteError = errorClass("INCOMPLETE", "IncompleteError");
exports.ERRORS_BY_CODE = new Map([
    exports.InvalidError,
    exports.NoEventError,
    exports.ExistsError,
    exports.NotOpenError,
    exports.ClosedError,
    exports.SoldOutError,
    exports.LimitError,
    exports.NoHoldError,
    exports.HoldingError,
    exports.UnsyncedError,
    exports.TryAgainError,
    exports.QueueError,
    exports.WrongTypeError,
    exports.CorruptError,
    exports.InternalError,
    exports.NotRestoringError,
    exports.IncompleteError,
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
    return cls ? new cls(message, { cause }) : new TicketGateError(code, message, { cause });
}
/** Maps a client's error: reply errors become ours, anything else is kept. */
function fromReplyError(err) {
    return isReplyError(err) ? errorFor(err.message, err) : err;
}
