-- ticketgate schema, version 4: what the sidecar needs to heal an event
-- after an unplanned failover (a promoted replica that lacks writes MySQL
-- applied). See the README, "The sidecar and lost writes: the heal".

-- The journal: the applied log entries (id and canonical content), written
-- in the same transaction as the rows they applied, one row per batch (of
-- up to 500 entries) in a ring of 4,096 rows per event (slot = seq mod
-- 4096; the daemon never deletes); the heal finds where the new primary's
-- log meets it. Rows with seq at or above ticket_sync_offset.journal_seq
-- are forgotten (a heal's lost entries). stream_id: the row's last entry.
CREATE TABLE IF NOT EXISTS ticket_journal (
  event_id   VARCHAR(64) NOT NULL,
  slot       INT         NOT NULL,
  seq        BIGINT      NOT NULL,
  stream_id  VARCHAR(41) NOT NULL,
  content    MEDIUMTEXT  NOT NULL,
  PRIMARY KEY (event_id, slot)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- anchor: the digest of the content of the entry at last_stream_id (NULL:
-- not known yet, an offset from before V4); journal_seq: the next seq.
ALTER TABLE ticket_sync_offset
  ADD COLUMN anchor CHAR(16) NULL,
  ADD COLUMN journal_seq BIGINT NOT NULL DEFAULT 0;

-- Rows of a write MySQL applied that the new primary never got (a
-- re-applied write gets new rows from its new entry; these stay as history).
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
