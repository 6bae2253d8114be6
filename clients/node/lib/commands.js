"use strict";
/**
 * What each method sends and how its reply is read (pure). Names are
 * lower-case (`ticket.claim`) and the event is the first argument: the
 * transports route each command by it to the event's slot in a cluster.
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
exports.init = init;
exports.open = open;
exports.close = close;
exports.claim = claim;
exports.layout = layout;
exports.seatmap = seatmap;
exports.allocate = allocate;
exports.release = release;
exports.allocations = allocations;
exports.transfer = transfer;
exports.resell = resell;
exports.unlist = unlist;
exports.scan = scan;
exports.confirm = confirm;
exports.cancel = cancel;
exports.holder = holder;
exports.order = order;
exports.status = status;
exports.wait = wait;
exports.leave = leave;
exports.position = position;
exports.drop = drop;
const replies = __importStar(require("./replies"));
function options(pairs) {
    const out = [];
    for (const [word, value] of pairs) {
        if (value !== undefined && value !== null)
            out.push(word, String(value));
    }
    return out;
}
function words(pairs) {
    return pairs.flatMap(([word, value]) => (value === undefined ? [] : [word, value]));
}
/** `SEATS id ...`, sent last: the module takes every id after it. */
function seatIds(seats) {
    return seats === undefined ? [] : ["SEATS", ...seats.map(String)];
}
function write(args, parse) {
    return { args, readonly: false, parse };
}
function read(args, parse) {
    return { args, readonly: true, parse };
}
function init(event, total, o = {}) {
    const opts = options([
        ["OPENS", o.opens],
        ["CLOSES", o.closes],
        ["HOLD", o.hold],
        ["LIMIT", o.limit],
        ["OFFER", o.offer],
    ]);
    if (o.draw)
        opts.push("DRAW");
    opts.push(...options([
        ["ADMIT", o.admit],
        ["TRANSFER_UNTIL", o.transferUntil],
    ]));
    if (o.seats !== undefined) {
        opts.push("SEATS", typeof o.seats === "string" ? o.seats : JSON.stringify(o.seats));
    }
    return write(["ticket.init", event, String(total), ...opts], replies.parseOk);
}
function open(event) {
    return write(["ticket.open", event], replies.parseOk);
}
function close(event) {
    return write(["ticket.close", event], replies.parseOk);
}
function seated(o) {
    return (o.section !== undefined ||
        o.category !== undefined ||
        o.accessible !== undefined ||
        o.split === true ||
        o.seats !== undefined ||
        o.from !== undefined);
}
function claim(event, user, o = {}) {
    if (o.count === undefined && o.hold === undefined && !seated(o)) {
        return { args: ["ticket.claim", event, user], readonly: false, parse: replies.parseInteger };
    }
    const opts = options([
        ["COUNT", o.count],
        ["HOLD", o.hold],
    ]);
    opts.push(...words([
        ["SECTION", o.section],
        ["CATEGORY", o.category],
    ]));
    opts.push(...options([["ACCESSIBLE", o.accessible]]));
    if (o.split)
        opts.push("SPLIT");
    opts.push(...words([
        ["FROM", o.from],
        ["KEY", o.key],
    ]), ...seatIds(o.seats));
    const parse = o.count === undefined && o.seats === undefined ? replies.parseInteger : replies.parseTickets;
    return write(["ticket.claim", event, user, ...opts], parse);
}
function layout(event) {
    return read(["ticket.layout", event], replies.parseLayout);
}
function seatmap(event) {
    return read(["ticket.seatmap", event], replies.parseSeatmap);
}
function allocate(event, name, o = {}) {
    const opts = [
        ...options([["COUNT", o.count]]),
        ...words([
            ["SECTION", o.section],
            ["CATEGORY", o.category],
            ["KEY", o.key],
        ]),
        ...options([["RELEASE", o.release]]),
        ...seatIds(o.seats),
    ];
    return write(["ticket.allocate", event, name, ...opts], replies.parseTickets);
}
function release(event, name, o = {}) {
    const opts = [...options([["COUNT", o.count]]), ...seatIds(o.seats)];
    return write(["ticket.release", event, name, ...opts], replies.parseInteger);
}
function allocations(event) {
    return read(["ticket.allocations", event], replies.parseAllocations);
}
function transfer(event, from, to, o = {}) {
    return write(["ticket.transfer", event, from, to, ...ticketIds(o.tickets)], replies.parseInteger);
}
function resell(event, user, o = {}) {
    return write(["ticket.resell", event, user, ...ticketIds(o.tickets)], replies.parseInteger);
}
function unlist(event, user, o = {}) {
    return write(["ticket.unlist", event, user, ...ticketIds(o.tickets)], replies.parseInteger);
}
/** `TICKETS id ...` when given (the module takes every id after it: sent last). */
function ticketIds(tickets) {
    return tickets === undefined ? [] : ["TICKETS", ...tickets.map(String)];
}
function scan(event, ticket, gen, o = {}) {
    const opts = words([["GATE", o.gate]]);
    return write(["ticket.scan", event, String(ticket), String(gen), ...opts], replies.parseOk);
}
function confirm(event, user) {
    return write(["ticket.confirm", event, user], replies.parseInteger);
}
function cancel(event, user) {
    return write(["ticket.cancel", event, user], replies.parseOptionalInteger);
}
function holder(event, user) {
    return read(["ticket.holder", event, user], replies.parseOptionalInteger);
}
function order(event, user) {
    return read(["ticket.order", event, user], replies.parseOrder);
}
function status(event) {
    return read(["ticket.status", event], replies.parseStatus);
}
function wait(event, user, o = {}) {
    const opts = options([["COUNT", o.count]]);
    return write(["ticket.wait", event, user, ...opts], replies.parseInteger);
}
function leave(event, user) {
    return write(["ticket.leave", event, user], replies.parseBool);
}
function position(event, user) {
    return read(["ticket.position", event, user], replies.parseOptionalInteger);
}
function drop(event, o = {}) {
    return write(["ticket.drop", event, ...(o.force ? ["FORCE"] : [])], replies.parseInteger);
}
