-- ticketgate schema, version 7: a conflict row names the whole log entry
-- it is about by its SHA-256 (MariaDB 10.11 / MySQL 8; one plain ADD
-- COLUMN, nothing rewritten; the daemon still needs only
-- SELECT/INSERT/UPDATE).
--
-- A conflict row is bounded (user_id cut to 64 characters, ticket_number
-- NULL outside INT, detail cut to 1,024 characters), so a poison entry
-- (a user id of a megabyte, an entry larger than MySQL's
-- max_allowed_packet) costs one row and never stalls the drain. What the
-- row leaves out is identified here:
--
-- entry_sha256 -- SHA-256 (64 hex digits) of the entry as read from
--                 Redis: each field name and value as a netstring
--                 (`<length>:<bytes>,`), in stream order. NULL for a
--                 conflict about no single entry read (a restore that
--                 does not match, a write lost in a failover) and for
--                 rows from before V7.
ALTER TABLE ticket_conflict
  ADD COLUMN entry_sha256 CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL;
