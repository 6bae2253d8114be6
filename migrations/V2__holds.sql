-- ticketgate schema, version 2: holds, several tickets per order, history.
-- (MariaDB 10.11 / MySQL 8, InnoDB, utf8mb4_bin ids as in V1.)
--
-- An *order* is what one claim, hold or offer created: one user, 1..LIMIT
-- tickets, one status. Each ticket has its own ticket_participation row;
-- the rows of an order share order_id (the stream id of the entry that
-- created it), order_tickets (its size) and the status:
--   held     -- taken from stock until held_until (a checkout in progress)
--   active   -- sold (a claim, or a confirmed hold)
--   canceled -- given back by TICKET.CANCEL (stock returned)
--   expired  -- the hold ran out (stock returned)
-- Rows are never deleted: canceled and expired ones are history, and a user
-- may order again after a cancel or an expiry.
--
-- The three lines of defence after Redis:
--   1. ticket_stock's conditional UPDATE (holds take stock, expiry and
--      cancel give it back);
--   2. at most one live (held or active) row per ticket number:
--      UNIQUE(event_id, live_ticket);
--   3. at most one live order per (event, user): each order has exactly
--      one *lead* row (order_lead = 1, its lowest ticket), and
--      UNIQUE(event_id, live_lead) admits one live lead per user. This
--      replaces V1's UNIQUE(event_id, user_id), which history and
--      multi-ticket orders rule out, at the same cost per claim (an order
--      table would double the rows written per claim).
-- The ticket_order view shows one line per order.
-- Rows written by something other than the sidecar (a hand repair, a
-- V1-era tool) get the defaults: no order_id, a one-ticket lead row, so
-- they too count as their user's one live order.

ALTER TABLE ticket_participation
  DROP INDEX uq_participation_event_active_ticket,
  DROP COLUMN active_ticket,
  DROP INDEX uq_participation_event_user,
  MODIFY COLUMN status ENUM('active', 'canceled', 'held', 'expired') NOT NULL,
  ADD COLUMN order_id VARCHAR(41) NULL AFTER event_id,
  ADD COLUMN order_tickets INT NOT NULL DEFAULT 1 AFTER order_id,
  ADD COLUMN order_lead BOOLEAN NOT NULL DEFAULT 1 AFTER order_tickets,
  ADD COLUMN held_until DATETIME(3) NULL AFTER status,
  ADD COLUMN confirmed_at DATETIME(3) NULL AFTER claimed_at,
  ADD COLUMN expired_at DATETIME(3) NULL AFTER canceled_at;

-- V1 rows become one-ticket orders (V1 allowed one row per user).
UPDATE ticket_participation SET order_id = CONCAT('v1:', id);

ALTER TABLE ticket_participation
  -- ticket_number while held or active, NULL otherwise (NULLs never collide)
  ADD COLUMN live_ticket INT GENERATED ALWAYS AS (IF(status IN ('held', 'active'), ticket_number, NULL)) STORED,
  -- user_id on the lead row of a live order, NULL otherwise
  ADD COLUMN live_lead VARCHAR(64) GENERATED ALWAYS AS (IF(status IN ('held', 'active') AND order_lead, user_id, NULL)) STORED,
  ADD UNIQUE KEY uq_participation_event_live_ticket (event_id, live_ticket),
  ADD UNIQUE KEY uq_participation_event_live_lead (event_id, live_lead);

CREATE VIEW ticket_order AS
SELECT event_id, order_id, user_id, status, COUNT(*) AS tickets,
       MIN(held_until) AS held_until, MIN(claimed_at) AS created_at,
       MIN(confirmed_at) AS confirmed_at, MIN(canceled_at) AS canceled_at,
       MIN(expired_at) AS expired_at, MIN(stream_id) AS stream_id
FROM ticket_participation
WHERE order_id IS NOT NULL
GROUP BY event_id, order_id, user_id, status;
