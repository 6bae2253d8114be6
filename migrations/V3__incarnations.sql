-- ticketgate schema, version 3: incarnations and Redis data loss (issue 11).
-- (MariaDB 10.11 / MySQL 8, InnoDB; plain ADD COLUMNs, no data rewritten.)
--
-- ticket_event gains what `ticketgate-sidecar rebuild` needs to put an
-- event back into Redis, and the sidecar's verdict about it:
--   incarnation       -- the 16 hex digits TICKET.INIT drew (NULL: an event
--                        created before 0.3);
--   hold_ms, ticket_limit, offer_ms -- the event's checkout settings
--                        (offer_ms NULL = the default: hold_ms, or 10 min
--                        when hold_ms is 0);
--   dropped_at        -- TICKET.DROP was applied (status 'dropped');
--   quarantined_at, quarantine_reason -- Redis lost or replaced the event
--                        behind the sidecar's back: nothing more of it is
--                        applied until a rebuild's op=restore (sticky).
-- ticket_sync_offset.entries counts the log entries applied so far (NULL:
-- unknown, a row from before V3; the sidecar's verifier adopts a count).

ALTER TABLE ticket_event
  ADD COLUMN incarnation CHAR(16) NULL,
  ADD COLUMN hold_ms BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN ticket_limit INT NOT NULL DEFAULT 1,
  ADD COLUMN offer_ms BIGINT NULL,
  ADD COLUMN dropped_at DATETIME(3) NULL,
  ADD COLUMN quarantined_at DATETIME(3) NULL,
  ADD COLUMN quarantine_reason VARCHAR(255) NULL;

ALTER TABLE ticket_sync_offset
  ADD COLUMN entries BIGINT NULL;
