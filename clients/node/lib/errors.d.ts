/**
 * The module's error replies as errors: one class per code under
 * `TicketGateError`, which carries the `code` (`SOLDOUT`) and the server's
 * `message` (the text after the code). node-redis (`ErrorReply`) and ioredis
 * (`ReplyError`) both keep the whole line in `message`; `fromReplyError`
 * splits it.
 */
export declare class TicketGateError extends Error {
    /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
    readonly code: string;
    constructor(code: string, message: string, options?: {
        cause?: unknown;
    });
}
declare function errorClass(code: string, name: string): {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** `ERR`: malformed input (ids, numbers, options) or a wrong arity. */
export declare const InvalidError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** The event does not exist. */
export declare const NoEventError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** `init` of an event that exists already. */
export declare const ExistsError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** A claim before the event opens. */
export declare const NotOpenError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** The event was closed, or its closing time has passed. */
export declare const ClosedError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** Fewer free tickets than asked for (or others wait in line). */
export declare const SoldOutError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** More tickets than the event allows one user. */
export declare const LimitError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** `confirm` for a user who holds nothing (e.g. the hold expired). */
export declare const NoHoldError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** `wait` by a user who already holds tickets. */
export declare const HoldingError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** `drop` while the event's log still has entries to drain. */
export declare const UnsyncedError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** The event's keys are moving or being restored; nothing changed, retry. */
export declare const TryAgainError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** The event admits buyers through its queue (the draw). */
export declare const QueueError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** One of the event's keys holds another Redis type. */
export declare const WrongTypeError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** The event's keys hold values the module never writes. */
export declare const CorruptError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** A bug in the module, caught before it could harm Redis. */
export declare const InternalError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** A restore step on an event that is not being restored. */
export declare const NotRestoringError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
/** A restore committed before all of it was sent. */
export declare const IncompleteError: {
    new (message: string, options?: {
        cause?: unknown;
    }): {
        /** The first word of the error reply, e.g. `SOLDOUT` (`ERR` for malformed input). */
        readonly code: string;
        name: string;
        message: string;
        stack?: string;
        cause?: unknown;
    };
    readonly code: string;
    captureStackTrace(targetObject: object, constructorOpt?: Function): void;
    prepareStackTrace(err: Error, stackTraces: NodeJS.CallSite[]): any;
    stackTraceLimit: number;
};
export type TicketGateErrorClass = ReturnType<typeof errorClass>;
export declare const ERRORS_BY_CODE: ReadonlyMap<string, TicketGateErrorClass>;
/** Whether `err` is a Redis error reply (not a connection or client error). */
export declare function isReplyError(err: unknown): err is Error;
/** The error for one error line (`SOLDOUT event 'e1' is sold out`). */
export declare function errorFor(line: string, cause?: unknown): TicketGateError;
/** Maps a client's error: reply errors become ours, anything else is kept. */
export declare function fromReplyError(err: unknown): unknown;
export {};
