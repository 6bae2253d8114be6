-- ticketgate schema, version 5: the fair draw at open (issue 20).
-- (MariaDB 10.11 / MySQL 8, InnoDB; plain ADD COLUMNs and a new table, no
-- data rewritten; the daemon still needs only SELECT/INSERT/UPDATE.)
--
-- ticket_event gains a draw event's terms and its draw:
--   draw_commitment -- hex(SHA-256(seed)) the init record published (NULL:
--                      not a draw event);
--   draw_admit      -- offers per second (NULL: no admission rate);
--   draw_seed       -- the seed op=draw revealed (NULL until drawn; set only
--                      when SHA-256(seed) is draw_commitment);
--   drawn_at        -- the op=draw entry's time;
--   draw_stream_id  -- the op=draw entry's id.
ALTER TABLE ticket_event
  ADD COLUMN draw_commitment CHAR(64) NULL,
  ADD COLUMN draw_admit INT NULL,
  ADD COLUMN draw_seed CHAR(64) NULL,
  ADD COLUMN drawn_at DATETIME(3) NULL,
  ADD COLUMN draw_stream_id VARCHAR(41) NULL;

-- A draw event's queue in log order: every enter, entrant's leave, the draw
-- and every offer, one row per log entry, with the entry's id as two
-- numbers so that (stream_ms, stream_seq) orders the rows as the log did
-- (what `audit-draw` replays, with one index range scan). Append-only: a
-- batch writes its steps with one multi-row INSERT; the entrant list is
-- the enters less the leaves and offers. A step the heal undid (lost in an
-- unplanned failover; the new primary's ids may equal lost ones, hence
-- the surrogate key) stays as history with lost_in_failover = 1.
--   kind    -- enter, leave, draw or offer;
--   user_id -- NULL for the draw;
--   tickets -- an enter's count, an offer's ticket count (1 for a leave,
--              0 for the draw).
CREATE TABLE IF NOT EXISTS ticket_draw_step (
  id               BIGINT          NOT NULL AUTO_INCREMENT,
  event_id         VARCHAR(64)     NOT NULL,
  stream_ms        BIGINT UNSIGNED NOT NULL,
  stream_seq       BIGINT UNSIGNED NOT NULL,
  kind             ENUM('enter', 'leave', 'draw', 'offer') NOT NULL,
  user_id          VARCHAR(64)     NULL,
  tickets          INT             NOT NULL,
  at               DATETIME(3)     NOT NULL,
  lost_in_failover TINYINT(1)      NOT NULL DEFAULT 0,
  PRIMARY KEY (id),
  KEY ix_draw_step_log (event_id, stream_ms, stream_seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
