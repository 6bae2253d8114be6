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
export { TicketGate } from "./gate";
export type { AllocateOptions, Call, ClaimOptions, DropOptions, InitOptions, ReleaseOptions, ResellOptions, ScanOptions, TransferOptions, UnlistOptions, WaitOptions, } from "./commands";
export * as commands from "./commands";
export type { Allocation, Order, Row, Seat, Section, Status } from "./replies";
export { ENTERED, Layout } from "./replies";
export * as replies from "./replies";
export * from "./errors";
