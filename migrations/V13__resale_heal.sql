-- ticketgate schema, version 13: the heal re-applies or undoes lost
-- resells, unlists and resales (plain ADD COLUMNs and a key swapped, no
-- data rewritten).
--
-- An unplanned failover can lose a resale step after MySQL applied it.
-- The heal reverts every lost write in MySQL, newest first, and writes the
-- new primary's log after it (a re-applied one comes back as its own
-- entry, with rows of its own), so:
--   ticket_listing.lost_in_failover -- 1: its resell was undone by a heal
--                      (the row ends 'unlisted', not live: the seller may
--                      list the tickets again; history, never deleted);
--   ticket_resold.lost_in_failover  -- 1: the resale was undone by a heal:
--                      NO refund is owed for it (the payment system reads
--                      only rows at 0; history, never deleted).
-- A resale undone and re-applied sells the same ticket at the same
-- generation again: only a resale not lost is unique per generation.
ALTER TABLE ticket_listing
  ADD COLUMN lost_in_failover TINYINT NOT NULL DEFAULT 0;

ALTER TABLE ticket_resold
  ADD COLUMN lost_in_failover TINYINT NOT NULL DEFAULT 0,
  ADD COLUMN live_gen INT GENERATED ALWAYS AS (IF(lost_in_failover = 0, gen, NULL)) STORED,
  DROP KEY uq_resold_ticket_gen,
  ADD UNIQUE KEY uq_resold_live (event_id, ticket_number, live_gen);
