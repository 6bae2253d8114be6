/**
 * The module's error replies as errors: one class per code under
 * `TicketGateError`, which carries the `code` (`SOLDOUT`) and the server's
 * `message` (the text after the code). node-redis (`ErrorReply`) and ioredis
 * (`ReplyError`) both keep the whole line in `message`; `fromReplyError`
 * splits it.
 */

export class TicketGateError extends Error {
  /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = "TicketGateError";
  }
}

function errorClass(code: string, name: string) {
  const cls = class extends TicketGateError {
    static readonly code = code;
    constructor(message: string, options?: { cause?: unknown }) {
      super(code, message, options);
      this.name = name;
    }
  };
  Object.defineProperty(cls, "name", { value: name });
  return cls;
}

/** `ERR`: malformed input (ids, numbers, options) or a wrong arity. */
export const InvalidError = errorClass("ERR", "InvalidError");
/** The event does not exist. */
export const NoEventError = errorClass("NOEVENT", "NoEventError");
/** `init` of an event that exists already. */
export const ExistsError = errorClass("EXISTS", "ExistsError");
/** A claim before the event opens. */
export const NotOpenError = errorClass("NOTOPEN", "NotOpenError");
/** The event was closed, or its closing time has passed. */
export const ClosedError = errorClass("CLOSED", "ClosedError");
/** Fewer free tickets than asked for (or others wait in line). */
export const SoldOutError = errorClass("SOLDOUT", "SoldOutError");
/** More tickets than the event allows one user. */
export const LimitError = errorClass("LIMIT", "LimitError");
/** `confirm` for a user who holds nothing (e.g. the hold expired). */
export const NoHoldError = errorClass("NOHOLD", "NoHoldError");
/** `wait` by a user who already holds tickets. */
export const HoldingError = errorClass("HOLDING", "HoldingError");
/** `drop` while the event's log still has entries to drain. */
export const UnsyncedError = errorClass("UNSYNCED", "UnsyncedError");
/** The event's keys are moving or being restored; nothing changed, retry. */
export const TryAgainError = errorClass("TRYAGAIN", "TryAgainError");
/** The event admits buyers through its queue (the draw). */
export const QueueError = errorClass("QUEUE", "QueueError");
/** One of the event's keys holds another Redis type. */
export const WrongTypeError = errorClass("WRONGTYPE", "WrongTypeError");
/** The event's keys hold values the module never writes. */
export const CorruptError = errorClass("CORRUPT", "CorruptError");
/** A bug in the module, caught before it could harm Redis. */
export const InternalError = errorClass("INTERNAL", "InternalError");
/** A restore step on an event that is not being restored. */
export const NotRestoringError = errorClass("NOTRESTORING", "NotRestoringError");
/** A restore committed before all of it was sent. */
export const IncompleteError = errorClass("INCOMPLETE", "IncompleteError");

export type TicketGateErrorClass = ReturnType<typeof errorClass>;

export const ERRORS_BY_CODE: ReadonlyMap<string, TicketGateErrorClass> = new Map(
  [
    InvalidError,
    NoEventError,
    ExistsError,
    NotOpenError,
    ClosedError,
    SoldOutError,
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
  ].map((cls) => [cls.code, cls]),
);

/** Error classes of the Redis clients for a server's error reply. */
const REPLY_ERROR_NAMES = new Set(["ErrorReply", "SimpleError", "BlobError", "ReplyError"]);

/** Whether `err` is a Redis error reply (not a connection or client error). */
export function isReplyError(err: unknown): err is Error {
  return err instanceof Error && REPLY_ERROR_NAMES.has(err.constructor.name);
}

/** The error for one error line (`SOLDOUT event 'e1' is sold out`). */
export function errorFor(line: string, cause?: unknown): TicketGateError {
  const space = line.indexOf(" ");
  const code = space < 0 ? line : line.slice(0, space);
  const message = space < 0 ? "" : line.slice(space + 1);
  const cls = ERRORS_BY_CODE.get(code);
  return cls ? new cls(message, { cause }) : new TicketGateError(code, message, { cause });
}

/** Maps a client's error: reply errors become ours, anything else is kept. */
export function fromReplyError(err: unknown): unknown {
  return isReplyError(err) ? errorFor(err.message, err) : err;
}
