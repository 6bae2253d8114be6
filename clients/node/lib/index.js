"use strict";
/**
 * ticketgate: typed helpers for the ticketgate Redis module over node-redis 5
 * and ioredis 5. `new TicketGate(client)` gives every `TICKET.*` command as a
 * method returning a promise; error replies reject with one error class per
 * code (`SoldOutError`, ...) under `TicketGateError` (`.code`, `.message`).
 * A draw event (`init(e, n, { draw: true })`) answers `wait`/`position` with
 * `ENTERED` (-1) before its draw, and `claim` with `QueueError` while its
 * entrants wait. A seated event (`init(e, n, { seats: layout })`) takes
 * `claim(e, u, { count, section, category, accessible, split })` and
 * `claimSeats(e, u, ids)`; `layout()` names seat ids, `seatmap()` shows
 * them; `NotTogetherError`, `TakenError`, `OrphanError` are its errors.
 * Allocations (house seats, partners): `allocate`, `release`,
 * `allocations`, and `claim(e, u, { from, key })`; `ShortError`,
 * `NoKeyError`, `NoAllocationError`. After the sale: `transfer(e, from, to,
 * { tickets })` moves sold tickets (each a generation up, `Order.gens`),
 * `scan(e, ticket, gen, { gate })` admits one at the door once;
 * `NotSoldError`, `UsedError`, `StaleError`. Resale at face value:
 * `resell(e, u, { tickets })` lists sold tickets, `unlist(e, u, { tickets })`
 * takes them back, `Status.resale` counts the listed ones nobody holds;
 * `ListedError`, `NotListedError`.
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
var __exportStar = (this && this.__exportStar) || function(m, exports) {
    for (var p in m) if (p !== "default" && !Object.prototype.hasOwnProperty.call(exports, p)) __createBinding(exports, m, p);
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.replies = exports.Layout = exports.ENTERED = exports.commands = exports.TicketGate = void 0;
var gate_1 = require("./gate");
Object.defineProperty(exports, "TicketGate", { enumerable: true, get: function () { return gate_1.TicketGate; } });
exports.commands = __importStar(require("./commands"));
var replies_1 = require("./replies");
Object.defineProperty(exports, "ENTERED", { enumerable: true, get: function () { return replies_1.ENTERED; } });
Object.defineProperty(exports, "Layout", { enumerable: true, get: function () { return replies_1.Layout; } });
exports.replies = __importStar(require("./replies"));
__exportStar(require("./errors"), exports);
