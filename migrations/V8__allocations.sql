-- ticketgate schema, version 8: allocations (issue 42: kills, house seats,
-- partner channels, timed release).
-- (MariaDB 10.11 / MySQL 8, InnoDB; plain ADD COLUMNs and new tables, no
-- data rewritten; the daemon still needs only SELECT/INSERT/UPDATE.)
--
-- An allocation is free stock set aside under a name (op=allocate) and
-- given back to public sale (op=release); a claim or hold FROM it takes
-- its stock, a held order of it that expires or is cancelled gives it back
-- (the record's `from`). ticket_stock.remaining_stock (and a seated
-- event's ticket_seat_stock.remaining) stays the PUBLIC free stock, as
-- TICKET.STATUS `remaining` (and `categories`) count it, so at every
-- committed batch, per event:
--   ticket_stock.remaining_stock
--     + SUM(ticket_allocation.remaining_stock WHERE released_at IS NULL)
--     + COUNT(live ticket_participation rows) = ticket_event.total
-- (operations.md "Allocations in MySQL" has the query).

-- One row per (event, allocation name), under the same conditional UPDATE
-- as ticket_stock:
--   UPDATE ticket_allocation SET remaining_stock = remaining_stock - k
--   WHERE event_id = ? AND name = ? AND released_at IS NULL AND remaining_stock >= k
-- (refused: an `allocation_oversell` or `unknown_allocation` conflict row).
--   remaining_stock -- its free tickets (TICKET.ALLOCATIONS `free`);
--   release_at      -- unix ms when it releases itself (NULL: by hand only);
--   released_at     -- the release that ended it (left with nothing free);
--                      NULL while it exists in Redis. Allocating to an
--                      ended name starts it again (the row is reused).
--   stream_id       -- the last entry that changed the row.
-- Its key is never stored: the log does not carry it.
CREATE TABLE IF NOT EXISTS ticket_allocation (
  event_id        VARCHAR(64) NOT NULL,
  name            VARCHAR(32) NOT NULL,
  remaining_stock INT         NOT NULL,
  release_at      BIGINT      NULL,
  created_at      DATETIME(3) NOT NULL,
  updated_at      DATETIME(3) NOT NULL,
  released_at     DATETIME(3) NULL,
  stream_id       VARCHAR(41) NOT NULL,
  PRIMARY KEY (event_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Every move of tickets into or out of an allocation other than a claim
-- (which its participation rows record), in log order, one row per entry:
--   kind    -- allocate, release, or return (a held order FROM it that
--              expired or was cancelled back into it);
--   tickets -- how many; ticket_list -- which, as the record writes them
--              (`3,5,9`); what `audit-seats` replays.
-- Append-only, like ticket_draw_step (surrogate key: a heal may see ids
-- again).
CREATE TABLE IF NOT EXISTS ticket_allocation_step (
  id          BIGINT          NOT NULL AUTO_INCREMENT,
  event_id    VARCHAR(64)     NOT NULL,
  stream_ms   BIGINT UNSIGNED NOT NULL,
  stream_seq  BIGINT UNSIGNED NOT NULL,
  name        VARCHAR(32)     NOT NULL,
  kind        ENUM('allocate', 'release', 'return') NOT NULL,
  tickets     INT             NOT NULL,
  ticket_list MEDIUMTEXT      NOT NULL,
  at          DATETIME(3)     NOT NULL,
  PRIMARY KEY (id),
  KEY ix_allocation_step_log (event_id, stream_ms, stream_seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The allocation an order's tickets came from (every row of the order;
-- NULL: public stock), as its claim or hold record's `from` says.
ALTER TABLE ticket_participation
  ADD COLUMN allocation VARCHAR(32) NULL;

-- A seated event's free allocated seats: the allocation a seat is free in
-- right now (NULL: public, held or sold). Allocate and a return set it,
-- release and a claim FROM clear it, each as a conditional UPDATE that
-- must match every seat (else an `allocation_mismatch` conflict row);
-- ticket_seat_stock counts public free seats, without these.
ALTER TABLE ticket_seat
  ADD COLUMN allocation VARCHAR(32) NULL;
