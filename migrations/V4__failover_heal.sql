-- ticketgate schema, version 4: what the sidecar needs to heal an event
-- after an unplanned failover (a promoted replica that lacks writes MySQL
-- applied). See DESIGN.md "Unplanned failover: heal, never discard an
-- acknowledged sale".

-- The journal: every applied log entry (its id and canonical content),
-- written in the same transaction as the rows it applied, kept for a
-- window (10 minutes of log time); the heal finds where the new primary's
-- log meets it.
CREATE TABLE IF NOT EXISTS ticket_journal (
  id         BIGINT      NOT NULL AUTO_INCREMENT,
  event_id   VARCHAR(64) NOT NULL,
  stream_id  VARCHAR(41) NOT NULL,
  stream_ms  BIGINT      NOT NULL,
  content    TEXT        NOT NULL,
  PRIMARY KEY (id),
  KEY ix_journal_event (event_id, id),
  KEY ix_journal_age (event_id, stream_ms)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The digest of the content of the entry at last_stream_id (NULL: not known
-- yet, an offset from before V4).
ALTER TABLE ticket_sync_offset
  ADD COLUMN anchor CHAR(16) NULL;

-- Rows of a write MySQL applied that the new primary never got and that
-- could not be re-applied.
ALTER TABLE ticket_participation
  MODIFY COLUMN status ENUM('active', 'canceled', 'held', 'expired', 'lost_in_failover') NOT NULL;

-- One row per heal: where the logs met, what was lost and what became of it.
CREATE TABLE IF NOT EXISTS ticket_heal (
  id            BIGINT      NOT NULL AUTO_INCREMENT,
  event_id      VARCHAR(64) NOT NULL,
  diverged_at   VARCHAR(41) NOT NULL,
  offset_before VARCHAR(41) NOT NULL,
  offset_after  VARCHAR(41) NOT NULL,
  lost          INT         NOT NULL,
  reapplied     INT         NOT NULL,
  undone        INT         NOT NULL,
  detail        TEXT        NOT NULL,
  healed_at     DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  KEY ix_heal_event (event_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
