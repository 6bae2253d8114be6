-- ticketgate schema, version 6: reserved seating (issue 26).
-- (MariaDB 10.11 / MySQL 8, InnoDB; plain ADD COLUMNs and new tables, no
-- data rewritten; the daemon still needs only SELECT/INSERT/UPDATE.)
--
-- A seated event (TICKET.INIT ... SEATS layout) sells seats: its ticket
-- numbers are seat ids 1..total in layout order, so ticket_participation's
-- rows, indexes and the event's ticket_stock work unchanged. What seating
-- adds:
--
-- ticket_event.seat_layout -- the layout as the init record carries it
--                             (the stored JSON: every default filled in,
--                             each row's first seat id); NULL: not seated.
ALTER TABLE ticket_event
  ADD COLUMN seat_layout MEDIUMTEXT NULL;

-- One row per seat of a seated event, written with its init, so that every
-- order joins to seat names:
--   SELECT p.user_id, s.seat_name FROM ticket_participation p
--   JOIN ticket_seat s ON s.event_id = p.event_id AND s.seat_id = p.ticket_number
-- row_name: the row's name (`row` is a reserved word in MySQL 8);
-- label: the seat's label in its row; seat_name: `<section>-<row>-<label>`.
CREATE TABLE IF NOT EXISTS ticket_seat (
  event_id   VARCHAR(64) NOT NULL,
  seat_id    INT         NOT NULL,
  section    VARCHAR(16) NOT NULL,
  row_name   VARCHAR(16) NOT NULL,
  label      BIGINT      NOT NULL,
  category   VARCHAR(32) NOT NULL,
  `accessible` TINYINT(1) NOT NULL, -- (a reserved word: quote it)
  seat_name  VARCHAR(64) GENERATED ALWAYS AS (CONCAT(section, '-', row_name, '-', label)) VIRTUAL,
  PRIMARY KEY (event_id, seat_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The stock of each category of a seated event: free seats of the category
-- (accessible ones included), kept by the same conditional UPDATE as
-- ticket_stock, in the batch's transaction:
--   UPDATE ticket_seat_stock SET remaining = remaining - k
--   WHERE event_id = ? AND category = ? AND remaining >= k
-- so a category cannot oversell even if Redis were wrong (a refused UPDATE
-- is a `category_oversell` conflict row). seats: the category's size.
CREATE TABLE IF NOT EXISTS ticket_seat_stock (
  event_id  VARCHAR(64) NOT NULL,
  category  VARCHAR(32) NOT NULL,
  seats     INT         NOT NULL,
  remaining INT         NOT NULL,
  PRIMARY KEY (event_id, category)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- What `ticketgate-sidecar audit-seats` replays, on the lead row of each
-- order of a seated event (NULL elsewhere): how its seats were chosen, as
-- the claim, hold or offer record says (`pick`, and the request's filters
-- when given). The request's count is the order's size (order_tickets).
--   seat_pick       -- best, split or seats;
--   seat_section, seat_category, seat_accessible -- SECTION, CATEGORY,
--                      ACCESSIBLE of the request.
-- reapplied: the order was created by an entry the heal re-applied after an
-- unplanned failover (TICKET.REAPPLY); its seats were chosen on a history
-- that was lost, so the audit checks it for "no seat twice" only.
ALTER TABLE ticket_participation
  ADD COLUMN seat_pick ENUM('best', 'split', 'seats') NULL,
  ADD COLUMN seat_section VARCHAR(16) NULL,
  ADD COLUMN seat_category VARCHAR(32) NULL,
  ADD COLUMN seat_accessible INT NULL,
  ADD COLUMN reapplied TINYINT(1) NOT NULL DEFAULT 0;
