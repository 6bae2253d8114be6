-- ticketgate: MySQL / MariaDB accounts with least privilege.
--
-- Creates the database `ticketgate` and its two users. Run it once as an
-- administrator, before the first `ticketgate-sidecar migrate`:
--   sudo mariadb < deploy/mysql-grants.sql      (or: mariadb -u root -p < ...)
-- (idempotent: running it again changes nothing). Before that, for anything
-- but a trial on your own machine:
--   * replace each 'change-me-...' password with a long random one;
--   * replace `ticketgate` (the schema) if yours is named differently;
--   * narrow '%' to the hosts the sidecar and deploys run on, e.g. '10.0.%'.
-- Then:  ticketgate-sidecar migrate --mysql-url mysql://tg-migrate:PASSWORD@HOST:3306/ticketgate
--        ticketgate-sidecar run     --mysql-url mysql://tg-sidecar:PASSWORD@HOST:3306/ticketgate
-- "Access denied for user 'tg-migrate'@'localhost'" although the password is
-- right: the server still has the anonymous users a plain
-- `mariadb-install-db` makes (''@'localhost'), which win over '%' for local
-- logins; `mariadb-secure-installation` removes them.
-- Tested against MariaDB 10.11 by tests/tests/security_acl.rs.

CREATE DATABASE IF NOT EXISTS `ticketgate` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;

-- The migration user: `ticketgate-sidecar migrate` (and `run --migrate`).
-- DDL on the ticketgate schema only (create and change tables, indexes and
-- the ticket_order view of schema V2)
-- plus DML, which refinery needs for its history table
-- `refinery_schema_history` and a migration may need to move data. Use it
-- from deploy jobs, never from the daemon.
CREATE USER IF NOT EXISTS 'tg-migrate'@'%' IDENTIFIED BY 'change-me-tg-migrate';
GRANT CREATE, ALTER, DROP, INDEX, REFERENCES, CREATE VIEW, SELECT, INSERT, UPDATE, DELETE
  ON `ticketgate`.* TO 'tg-migrate'@'%';

-- The daemon user: `ticketgate-sidecar run` and `reconcile`. Reads, inserts
-- and updates rows; no DELETE (the sidecar never deletes a row: cancels and
-- conflicts are rows of their own), no DDL, nothing outside the schema.
-- Granted on the schema rather than table by table: MariaDB refuses a
-- table grant before `migrate` has created the table, and a table added by
-- a later migration would otherwise break the running daemon until someone
-- remembers a new GRANT. The schema holds nothing but ticketgate's tables.
-- Stricter variant, to run after every `migrate` instead of the line below:
--   GRANT SELECT, INSERT, UPDATE ON `ticketgate`.`ticket_event` TO 'tg-sidecar'@'%';
--   GRANT SELECT, INSERT, UPDATE ON `ticketgate`.`ticket_stock` TO 'tg-sidecar'@'%';
--   GRANT SELECT, INSERT, UPDATE ON `ticketgate`.`ticket_participation` TO 'tg-sidecar'@'%';
--   GRANT SELECT, INSERT, UPDATE ON `ticketgate`.`ticket_sync_offset` TO 'tg-sidecar'@'%';
--   GRANT SELECT, INSERT ON `ticketgate`.`ticket_conflict` TO 'tg-sidecar'@'%';
--   GRANT SELECT, INSERT, UPDATE ON `ticketgate`.`ticket_journal` TO 'tg-sidecar'@'%';
--   GRANT SELECT, INSERT, UPDATE ON `ticketgate`.`ticket_heal` TO 'tg-sidecar'@'%';
--   GRANT SELECT, INSERT, UPDATE ON `ticketgate`.`ticket_draw_step` TO 'tg-sidecar'@'%';
--   GRANT SELECT, INSERT, UPDATE ON `ticketgate`.`ticket_seat` TO 'tg-sidecar'@'%';
--   GRANT SELECT, INSERT, UPDATE ON `ticketgate`.`ticket_seat_stock` TO 'tg-sidecar'@'%';
--   GRANT SELECT, INSERT, UPDATE ON `ticketgate`.`ticket_allocation` TO 'tg-sidecar'@'%';
--   GRANT SELECT, INSERT, UPDATE ON `ticketgate`.`ticket_allocation_step` TO 'tg-sidecar'@'%';
--   GRANT SELECT, INSERT, UPDATE ON `ticketgate`.`ticket_owner` TO 'tg-sidecar'@'%';
--   GRANT SELECT, INSERT, UPDATE ON `ticketgate`.`ticket_scan` TO 'tg-sidecar'@'%';
--   GRANT SELECT, INSERT, UPDATE ON `ticketgate`.`ticket_listing` TO 'tg-sidecar'@'%';
--   GRANT SELECT, INSERT, UPDATE (lost_in_failover) ON `ticketgate`.`ticket_resold` TO 'tg-sidecar'@'%';
CREATE USER IF NOT EXISTS 'tg-sidecar'@'%' IDENTIFIED BY 'change-me-tg-sidecar';
GRANT SELECT, INSERT, UPDATE ON `ticketgate`.* TO 'tg-sidecar'@'%';

-- With TLS on the server (ssl_cert/ssl_key), refuse these users anything
-- but TLS (the sidecar then needs --mysql-ca):
--   ALTER USER 'tg-migrate'@'%' REQUIRE SSL;
--   ALTER USER 'tg-sidecar'@'%' REQUIRE SSL;
