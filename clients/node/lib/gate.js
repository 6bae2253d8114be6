"use strict";
/**
 * `TicketGate`: every `TICKET.*` command as a promise-returning method with
 * typed replies; error replies reject with a `TicketGateError` subclass.
 */
var __createBinding = (this && this.__createBinding) || (Object.create ? (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    var desc = Object.getOwnPropertyDescriptor(m, k);
    if (!desc || ("get" in desc ? !m.__esModule : desc.writable || desc.configurable)) {
      desc = { enumerable: true, get: function() { return m[k]; } };
    }
    Object.defineProperty(o, k2, desc);
}) : (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    o[k2] = m[k];
}));
var __setModuleDefault = (this && this.__setModuleDefault) || (Object.create ? (function(o, v) {
    Object.defineProperty(o, "default", { enumerable: true, value: v });
}) : function(o, v) {
    o["default"] = v;
});
var __importStar = (this && this.__importStar) || (function () {
    var ownKeys = function(o) {
        ownKeys = Object.getOwnPropertyNames || function (o) {
            var ar = [];
            for (var k in o) if (Object.prototype.hasOwnProperty.call(o, k)) ar[ar.length] = k;
            return ar;
        };
        return ownKeys(o);
    };
    return function (mod) {
        if (mod && mod.__esModule) return mod;
        var result = {};
        if (mod != null) for (var k = ownKeys(mod), i = 0; i < k.length; i++) if (k[i] !== "default") __createBinding(result, mod, k[i]);
        __setModuleDefault(result, mod);
        return result;
    };
})();
Object.defineProperty(exports, "__esModule", { value: true });
exports.TicketGate = void 0;
const commands = __importStar(require("./commands"));
const errors_1 = require("./errors");
const transport_1 = require("./transport");
function rethrow(err) {
    throw (0, errors_1.fromReplyError)(err);
}
class TicketGate {
    #send;
    /** `client`: a node-redis 5 client or cluster, or an ioredis 5 `Redis` or `Cluster`. */
    constructor(client) {
        this.#send = (0, transport_1.transportFor)(client);
    }
    /** Sends one prepared command and types its reply. */
    run(call) {
        // `then` rather than async/await: one promise less per command (the
        // claim is the hot path; the wrapper must cost under 5%).
        return this.#send(call.args, call.readonly).then(call.parse, rethrow);
    }
    /** Creates an event of `total` tickets (times in unix ms, durations in ms; `draw`, `admit`: a draw). */
    init(event, total, options) {
        return this.run(commands.init(event, total, options));
    }
    open(event) {
        return this.run(commands.open(event));
    }
    close(event) {
        return this.run(commands.close(event));
    }
    claim(event, user, options) {
        return this.run(commands.claim(event, user, options));
    }
    /**
     * Exactly these seats (ids; `layout()` names them) of a seated event:
     * `TakenError` if one is, `OrphanError` if they would leave a single seat
     * alone that another pick of the row would not.
     */
    claimSeats(event, user, seats, options = {}) {
        return this.run(commands.claim(event, user, { ...options, seats }));
    }
    /** A seated event's layout (`seatName(id)` names a seat); null if not seated. */
    layout(event) {
        return this.run(commands.layout(event));
    }
    /**
     * One character per seat id (index id - 1): `.` free, `h` held, `s` sold,
     * `a` free in an allocation; null if not seated.
     */
    seatmap(event) {
        return this.run(commands.seatmap(event));
    }
    /**
     * Operator: sets `count` free tickets (within `section`/`category`), or
     * exactly `seats`, aside in the allocation `name`, out of public sale;
     * claims take them with `{ from: name, key }`. `release` (unix ms): what
     * is left goes public then. The tickets allocated; `ShortError` if fewer
     * are free, `NoKeyError` adding with another key.
     */
    allocate(event, name, options) {
        return this.run(commands.allocate(event, name, options));
    }
    /**
     * Operator: gives the allocation's free tickets (all, the `count` lowest,
     * or `seats`) back to public sale, the waiting list first; how many.
     */
    release(event, name, options) {
        return this.run(commands.release(event, name, options));
    }
    /** The event's allocations in name order (never their keys). */
    allocations(event) {
        return this.run(commands.allocations(event));
    }
    /**
     * Gives `from`'s sold tickets (all, or `tickets`) to `to` in one step, each
     * a generation up (`order().gens`); how many. `NotSoldError` (held, or not
     * the giver's), `UsedError` (scanned), `LimitError` (the receiver's),
     * `ClosedError` (after `TRANSFER_UNTIL`), `NoHoldError` (the giver has
     * none), `ListedError` (listed for resale: `unlist` first).
     */
    transfer(event, from, to, options) {
        return this.run(commands.transfer(event, from, to, options));
    }
    /**
     * Lists the user's sold tickets (all not listed yet, or `tickets`) for
     * resale at face value; how many. They stay the user's until a buyer
     * confirms one (a generation up). `ListedError` (listed already),
     * `NotSoldError` (held, or not the user's), `UsedError` (scanned),
     * `ClosedError` (after `TRANSFER_UNTIL`), `NoHoldError` (the user has none).
     */
    resell(event, user, options) {
        return this.run(commands.resell(event, user, options));
    }
    /**
     * Takes back the user's listed tickets no buyer holds (all, or `tickets`);
     * how many (0: none listed). `NotListedError` (not listed by the user, or
     * held by a buyer).
     */
    unlist(event, user, options) {
        return this.run(commands.unlist(event, user, options));
    }
    /**
     * Admits a ticket at the door: its first scan at its current generation
     * resolves; `UsedError` (scanned before), `StaleError` (transferred since:
     * an old credential), `NotSoldError` (free, held, listed).
     */
    scan(event, ticket, gen, options) {
        return this.run(commands.scan(event, ticket, gen, options));
    }
    /** Makes the user's held order sold; the number of tickets the user holds. */
    confirm(event, user) {
        return this.run(commands.confirm(event, user));
    }
    /** Releases all the user's tickets (every one of a multi-ticket order); the lowest, or null. */
    cancel(event, user) {
        return this.run(commands.cancel(event, user));
    }
    holder(event, user) {
        return this.run(commands.holder(event, user));
    }
    order(event, user) {
        return this.run(commands.order(event, user));
    }
    status(event) {
        return this.run(commands.status(event));
    }
    /**
     * Joins the waiting list: the 1-based position, 0 when offered at once, or
     * `ENTERED` (-1) when the user entered a draw not yet drawn.
     */
    wait(event, user, options) {
        return this.run(commands.wait(event, user, options));
    }
    leave(event, user) {
        return this.run(commands.leave(event, user));
    }
    /** The 1-based place, 0 offered, `ENTERED` (-1) in a draw not yet drawn, null not on the list. */
    position(event, user) {
        return this.run(commands.position(event, user));
    }
    /** Deletes the event's keys; the number deleted. */
    drop(event, options) {
        return this.run(commands.drop(event, options));
    }
}
exports.TicketGate = TicketGate;
