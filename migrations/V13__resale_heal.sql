-- ticketgate schema, version 13: the heal re-applies or undoes lost
-- resells and unlists (a plain ADD COLUMN, no data rewritten).
--
-- An unplanned failover can lose a resell after MySQL applied it. The heal
-- reverts every lost write in MySQL, newest first, and writes the new
-- primary's log after it (a re-applied resell comes back as its own entry,
-- with listing rows of its own), so the listing rows of a lost resell end
-- ('unlisted', not live: the seller may list the tickets again) and keep
-- why:
--   ticket_listing.lost_in_failover -- 1: its resell was undone by a heal
--                      (history, never deleted).
ALTER TABLE ticket_listing
  ADD COLUMN lost_in_failover TINYINT NOT NULL DEFAULT 0;
