-- ticketgate schema, version 1 (MariaDB 10.11 / MySQL 8, InnoDB, utf8mb4).
-- Applied by `ticketgate-sidecar migrate` (refinery, history in
-- `refinery_schema_history`). Never edit an applied migration: add V2__*.sql.
-- Ids use utf8mb4_bin: user and event ids are case-sensitive byte strings in
-- Redis, so 'Alice' and 'alice' must be different rows here too.

CREATE TABLE IF NOT EXISTS ticket_event (
  event_id    VARCHAR(64) NOT NULL,
  total       INT         NOT NULL,
  status      VARCHAR(16) NOT NULL,
  opens_at    DATETIME(3) NULL,
  closes_at   DATETIME(3) NULL,
  created_at  DATETIME(3) NOT NULL,
  updated_at  DATETIME(3) NOT NULL,
  PRIMARY KEY (event_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS ticket_stock (
  event_id        VARCHAR(64) NOT NULL,
  remaining_stock INT         NOT NULL,
  PRIMARY KEY (event_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS ticket_participation (
  id            BIGINT      NOT NULL AUTO_INCREMENT,
  event_id      VARCHAR(64) NOT NULL,
  user_id       VARCHAR(64) NOT NULL,
  ticket_number INT         NOT NULL,
  status        ENUM('active', 'canceled') NOT NULL,
  claimed_at    DATETIME(3) NOT NULL,
  canceled_at   DATETIME(3) NULL,
  stream_id     VARCHAR(41) NOT NULL,
  -- ticket_number while active, NULL otherwise: NULLs never collide, so the
  -- unique index below allows any number of canceled rows per ticket but at
  -- most one active holder of each number, even if Redis were wrong.
  active_ticket INT GENERATED ALWAYS AS (IF(status = 'active', ticket_number, NULL)) STORED,
  PRIMARY KEY (id),
  UNIQUE KEY uq_participation_event_user (event_id, user_id),
  UNIQUE KEY uq_participation_event_active_ticket (event_id, active_ticket)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS ticket_sync_offset (
  event_id       VARCHAR(64) NOT NULL,
  last_stream_id VARCHAR(41) NOT NULL,
  updated_at     DATETIME(3) NOT NULL,
  PRIMARY KEY (event_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS ticket_conflict (
  id            BIGINT        NOT NULL AUTO_INCREMENT,
  event_id      VARCHAR(64)   NOT NULL,
  stream_id     VARCHAR(41)   NOT NULL,
  user_id       VARCHAR(64)   NULL,
  ticket_number INT           NULL,
  reason        VARCHAR(32)   NOT NULL,
  detail        VARCHAR(1024) NOT NULL,
  created_at    DATETIME(3)   NOT NULL,
  PRIMARY KEY (id),
  KEY ix_conflict_event (event_id, stream_id),
  KEY ix_conflict_reason (reason)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
