-- ticketgate schema, version 12: the heal re-applies or undoes lost
-- transfers and scans (issue 43). (Plain ADD COLUMNs and a key swapped,
-- no data rewritten.)
--
-- An unplanned failover can lose a transfer or a scan after MySQL applied
-- it. The heal reverts every lost write in MySQL, newest first, and writes
-- the new primary's log after it (a re-applied one comes back as its own
-- entry), so each row keeps what the undo needs, as V9 did for
-- allocation steps:
--   ticket_owner.prior_order_id, prior_stream_id -- the moved row's order
--                      and stream id before the transfer (NULL: written
--                      before version 12; the undo then keeps them);
--   lost_in_failover -- 1: undone by a heal (history, never deleted).
-- A scan undone and re-applied admits the same row at the same generation
-- again: only a scan not lost is unique per row and generation.
ALTER TABLE ticket_owner
  ADD COLUMN prior_order_id   VARCHAR(41) NULL,
  ADD COLUMN prior_stream_id  VARCHAR(41) NULL,
  ADD COLUMN lost_in_failover TINYINT     NOT NULL DEFAULT 0;

ALTER TABLE ticket_scan
  ADD COLUMN lost_in_failover TINYINT NOT NULL DEFAULT 0,
  ADD COLUMN live_gen INT GENERATED ALWAYS AS (IF(lost_in_failover = 0, gen, NULL)) STORED,
  DROP KEY uq_scan_participation,
  ADD UNIQUE KEY uq_scan_live (participation_id, live_gen);

-- The event's transfer deadline (INIT ... TRANSFER_UNTIL, unix ms; NULL:
-- none given, transfers stop at closes_at), so `rebuild` restores it.
ALTER TABLE ticket_event
  ADD COLUMN transfer_until BIGINT NULL;
