-- ticketgate schema, version 2: holds, several tickets per order, history.
-- (MariaDB 10.11 / MySQL 8, InnoDB, utf8mb4_bin ids as in V1.)
--
-- An *order* is what one claim, hold or offer created: one user, 1..LIMIT
-- tickets, one status. Each of its tickets has its own ticket_participation
-- row with the same status:
--   held     -- taken from stock until held_until (a checkout in progress)
--   active   -- sold (a claim, or a confirmed hold)
--   canceled -- given back by TICKET.CANCEL (stock returned)
--   expired  -- the hold ran out (stock returned)
-- Rows and orders are never deleted: canceled and expired ones are history,
-- and a user may order again after a cancel or an expiry.
--
-- The three lines of defence after Redis:
--   1. ticket_stock's conditional UPDATE (holds take stock, expiry and
--      cancel give it back);
--   2. at most one live (held or active) row per ticket number:
--      UNIQUE(event_id, live_ticket);
--   3. at most one live order per (event, user):
--      UNIQUE(event_id, live_user) on ticket_order. It replaces V1's
--      UNIQUE(event_id, user_id), which history and multi-ticket orders
--      rule out.
-- order_id links a row to its order. It is NULL only for rows written by
-- something other than the sidecar (a hand repair, a V1-era tool), which the
-- unique live_ticket index still guards.

CREATE TABLE IF NOT EXISTS ticket_order (
  event_id      VARCHAR(64) NOT NULL,
  -- the stream id of the claim/hold/offer that created the order;
  -- 'v1:<participation id>' for an order migrated from a V1 row
  order_id      VARCHAR(41) NOT NULL,
  user_id       VARCHAR(64) NOT NULL,
  status        ENUM('held', 'active', 'canceled', 'expired') NOT NULL,
  tickets       INT         NOT NULL,
  held_until    DATETIME(3) NULL,
  created_at    DATETIME(3) NOT NULL,
  confirmed_at  DATETIME(3) NULL,
  canceled_at   DATETIME(3) NULL,
  expired_at    DATETIME(3) NULL,
  -- the last log entry that changed the order
  stream_id     VARCHAR(41) NOT NULL,
  live_user     VARCHAR(64) GENERATED ALWAYS AS (IF(status IN ('held', 'active'), user_id, NULL)) STORED,
  PRIMARY KEY (event_id, order_id),
  UNIQUE KEY uq_order_event_live_user (event_id, live_user)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- V1 rows become one-ticket orders (one per row: V1 allowed one row per user).
INSERT INTO ticket_order (event_id, order_id, user_id, status, tickets, created_at, canceled_at, stream_id)
SELECT event_id, CONCAT('v1:', id), user_id, CAST(status AS CHAR), 1, claimed_at, canceled_at, stream_id
FROM ticket_participation;

ALTER TABLE ticket_participation
  DROP INDEX uq_participation_event_active_ticket,
  DROP COLUMN active_ticket,
  DROP INDEX uq_participation_event_user,
  MODIFY COLUMN status ENUM('active', 'canceled', 'held', 'expired') NOT NULL,
  ADD COLUMN order_id VARCHAR(41) NULL AFTER event_id,
  ADD COLUMN held_until DATETIME(3) NULL AFTER status,
  ADD COLUMN confirmed_at DATETIME(3) NULL AFTER claimed_at,
  ADD COLUMN expired_at DATETIME(3) NULL AFTER canceled_at;

UPDATE ticket_participation SET order_id = CONCAT('v1:', id);

ALTER TABLE ticket_participation
  -- ticket_number while held or active, NULL otherwise (NULLs never collide)
  ADD COLUMN live_ticket INT GENERATED ALWAYS AS (IF(status IN ('held', 'active'), ticket_number, NULL)) STORED,
  ADD UNIQUE KEY uq_participation_event_live_ticket (event_id, live_ticket);
