-- ticketgate schema, version 10: transfer and entry scan (issue 43).
-- (Plain ADD COLUMN and new tables, no data rewritten.)
--
-- A sold ticket's generation (1 at sale, + 1 per transfer) is the gen of
-- its live participation row: a transfer moves the rows to the new owner
-- and raises it, so the live rows stay what Redis's holders say. Every
-- owner after the buyer (generation 2 on) is a ticket_owner row, insert-
-- only history: the buyer is the order's row itself.
ALTER TABLE ticket_participation
  ADD COLUMN gen INT NOT NULL DEFAULT 1;

CREATE TABLE ticket_owner (
  id               BIGINT       NOT NULL AUTO_INCREMENT,
  event_id         VARCHAR(64)  NOT NULL,
  ticket_number    INT          NOT NULL,
  gen              INT          NOT NULL,
  user_id          VARCHAR(64)  NOT NULL,
  -- who gave it (the previous owner)
  from_user        VARCHAR(64)  NOT NULL,
  -- the transfer's log entry: owner since then
  since_stream_id  VARCHAR(41)  NOT NULL,
  at               DATETIME(3)  NOT NULL,
  PRIMARY KEY (id),
  KEY ix_owner_ticket (event_id, ticket_number, gen)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Each admitting scan: the participation row it admitted (so a ticket
-- cancelled and sold again is scanned afresh), at its generation.
CREATE TABLE ticket_scan (
  id               BIGINT       NOT NULL AUTO_INCREMENT,
  event_id         VARCHAR(64)  NOT NULL,
  ticket_number    INT          NOT NULL,
  gen              INT          NOT NULL,
  gate             VARCHAR(32)  NULL,
  participation_id BIGINT       NOT NULL,
  scanned_at       DATETIME(3)  NOT NULL,
  stream_id        VARCHAR(41)  NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_scan_participation (participation_id, gen),
  KEY ix_scan_ticket (event_id, ticket_number)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
