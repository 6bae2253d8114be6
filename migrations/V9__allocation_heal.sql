-- ticketgate schema, version 9: the heal undoes lost allocation moves
-- (issue 42). (Plain ADD COLUMNs, no data rewritten.)
--
-- An unplanned failover can lose an allocate, a release, or a held order
-- FROM an allocation returned to it, after MySQL applied it. The heal
-- undoes every lost write in MySQL, newest first (docs/design.md "Healing
-- after an unplanned failover"), so each allocation step keeps what its
-- allocation's row was just before it, which is exactly what the undo
-- puts back:
--   prior_free       -- its free stock before the step; -1: it was not
--                       live (made or started again by this allocate);
--                       NULL: written before version 9 (the undo then
--                       reverses the counts only);
--   prior_release_at -- its release time before the step;
--   lost_in_failover -- 1: undone by a heal (history, like
--                       ticket_draw_step's; audit-seats skips it).
ALTER TABLE ticket_allocation_step
  ADD COLUMN prior_free       INT     NULL,
  ADD COLUMN prior_release_at BIGINT  NULL,
  ADD COLUMN lost_in_failover TINYINT NOT NULL DEFAULT 0;
