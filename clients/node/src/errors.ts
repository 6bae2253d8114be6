/**
 * The module's error replies as errors: one class per code under
 * `TicketGateError`, which carries the `code` (`SOLDOUT`) and the server's
 * `message` (the text after the code). node-redis (`ErrorReply`) and ioredis
 * (`ReplyError`) both keep the whole line in `message`; `fromReplyError`
 * splits it.
 */

export class TicketGateError extends Error {
  /** The code of this class's errors (`""` for the base). */
  static readonly code: string = "";
  /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
  readonly code: string;

  /** `code` is needed only for the base class (a code with no class of its own). */
  constructor(message: string, options: { code?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    const cls = new.target as typeof TicketGateError;
    this.code = options.code ?? cls.code;
    this.name = cls.name;
  }
}

/** `ERR`: malformed input (ids, numbers, options) or a wrong arity. */
export class InvalidError extends TicketGateError {
  static readonly code = "ERR";
}

/** The event does not exist. */
export class NoEventError extends TicketGateError {
  static readonly code = "NOEVENT";
}

/** `init` of an event that exists already. */
export class ExistsError extends TicketGateError {
  static readonly code = "EXISTS";
}

/** A claim before the event opens. */
export class NotOpenError extends TicketGateError {
  static readonly code = "NOTOPEN";
}

/** The event was closed, or its closing time has passed. */
export class ClosedError extends TicketGateError {
  static readonly code = "CLOSED";
}

/** Fewer free tickets than asked for (or others wait in line). */
export class SoldOutError extends TicketGateError {
  static readonly code = "SOLDOUT";
}

/** More tickets than the event allows one user. */
export class LimitError extends TicketGateError {
  static readonly code = "LIMIT";
}

/** `confirm` for a user who holds nothing (e.g. the hold expired). */
export class NoHoldError extends TicketGateError {
  static readonly code = "NOHOLD";
}

/** `wait` by a user who already holds tickets. */
export class HoldingError extends TicketGateError {
  static readonly code = "HOLDING";
}

/** `drop` while the event's log still has entries to drain. */
export class UnsyncedError extends TicketGateError {
  static readonly code = "UNSYNCED";
}

/** The event's keys are moving or being restored; nothing changed, retry. */
export class TryAgainError extends TicketGateError {
  static readonly code = "TRYAGAIN";
}

/**
 * A claim by a user without an offer while a draw event's drawn entrants
 * still wait: the event sells through its queue; `wait()`.
 */
export class QueueError extends TicketGateError {
  static readonly code = "QUEUE";
}

/** One of the event's keys holds another Redis type. */
export class WrongTypeError extends TicketGateError {
  static readonly code = "WRONGTYPE";
}

/** The event's keys hold values the module never writes. */
export class CorruptError extends TicketGateError {
  static readonly code = "CORRUPT";
}

/** A bug in the module, caught before it could harm Redis. */
export class InternalError extends TicketGateError {
  static readonly code = "INTERNAL";
}

/** A seated claim: no `count` seats together where allowed (`split` takes single seats). */
export class NotTogetherError extends TicketGateError {
  static readonly code = "NOTOGETHER";
}

/** A picked seat is held or sold. */
export class TakenError extends TicketGateError {
  static readonly code = "TAKEN";
}

/** The picked seats would leave a single seat alone that another pick of the row would not. */
export class OrphanError extends TicketGateError {
  static readonly code = "ORPHAN";
}

/** `allocate` (or `release` with a count) asked for more than is free; nothing changed. */
export class ShortError extends TicketGateError {
  static readonly code = "SHORT";
}

/** A claim from an allocation without its key (or a wrong one), or allocating again with another key. */
export class NoKeyError extends TicketGateError {
  static readonly code = "NOKEY";
}

/** The event has no allocation of that name. */
export class NoAllocationError extends TicketGateError {
  static readonly code = "NOALLOCATION";
}

/** `transfer` or `scan` of a ticket that is not sold: free, held, listed, or not the giver's. */
export class NotSoldError extends TicketGateError {
  static readonly code = "NOTSOLD";
}

/** `scan` of a ticket scanned already (the message says when and at which gate), or its `transfer`. */
export class UsedError extends TicketGateError {
  static readonly code = "USED";
}

/** `scan` at a generation that is not the ticket's: it was transferred since. */
export class StaleError extends TicketGateError {
  static readonly code = "STALE";
}

/** `resell` of a ticket listed already, or `transfer` (or `cancel`) of one listed for resale. */
export class ListedError extends TicketGateError {
  static readonly code = "LISTED";
}

/** `unlist` of a ticket that is not listed by the user, or that a buyer holds. */
export class NotListedError extends TicketGateError {
  static readonly code = "NOTLISTED";
}

/** A restore step on an event that is not being restored. */
export class NotRestoringError extends TicketGateError {
  static readonly code = "NOTRESTORING";
}

/** A restore committed before all of it was sent. */
export class IncompleteError extends TicketGateError {
  static readonly code = "INCOMPLETE";
}

export type TicketGateErrorClass = typeof TicketGateError;

export const ERRORS_BY_CODE: ReadonlyMap<string, TicketGateErrorClass> = new Map(
  [
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
export function fromReplyError(err: unknown): unknown {
  if (isReplyError(err)) return errorFor(err.message, err);
  if (err instanceof Error && err.message.startsWith(IOREDIS_GAVE_UP)) {
    const last = errorFor(err.message.slice(IOREDIS_GAVE_UP.length), err);
    if (!REDIRECTIONS.has(last.code)) return last;
    return new TryAgainError(`the cluster client gave up after 16 tries: ${err.message}`, {
      cause: err,
    });
  }
  return err;
}
