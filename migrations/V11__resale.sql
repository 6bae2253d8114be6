-- ticketgate schema, version 11: face-value resale (docs/design.md "After
-- the sale"). New tables only, no data rewritten.
--
-- A listed ticket stays its seller's live participation row until a buyer
-- confirms it; the listing is a ticket_listing row. While a buyer holds
-- it, the buyer's hold is written on the listing (buyer, buyer_order,
-- held_until), not as a participation row: it takes no stock and cannot
-- collide with the seller's live row. `resold` moves the seller's row to
-- the buyer a generation up (as a transfer does), ends the listing
-- ('sold') and inserts a ticket_resold row (the payment system's refund
-- list) and a ticket_owner row.
--
-- A moved row keeps the order that first took its ticket in first_order
-- (audit-seats replays the take there, with its pick).
ALTER TABLE ticket_participation
  ADD COLUMN first_order VARCHAR(41) NULL;

CREATE TABLE ticket_listing (
  id               BIGINT       NOT NULL AUTO_INCREMENT,
  event_id         VARCHAR(64)  NOT NULL,
  ticket_number    INT          NOT NULL,
  seller           VARCHAR(64)  NOT NULL,
  state            ENUM('listed', 'unlisted', 'sold') NOT NULL DEFAULT 'listed',
  listed_at        DATETIME(3)  NOT NULL,
  -- the resell entry; then the unlist or resold entry that ended it
  listed_stream_id VARCHAR(41)  NOT NULL,
  ended_stream_id  VARCHAR(41)  NULL,
  ended_at         DATETIME(3)  NULL,
  -- the buyer holding it (NULL: on the list), the hold or claim that took
  -- it (the buyer's order id) and its deadline
  buyer            VARCHAR(64)  NULL,
  buyer_order      VARCHAR(41)  NULL,
  held_until       DATETIME(3)  NULL,
  live_listing     INT GENERATED ALWAYS AS (IF(state = 'listed', ticket_number, NULL)) STORED,
  PRIMARY KEY (id),
  UNIQUE KEY uq_listing_live (event_id, live_listing),
  KEY ix_listing_buyer (event_id, buyer)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Each resold ticket, insert-only: whom the payment system refunds.
CREATE TABLE ticket_resold (
  id               BIGINT       NOT NULL AUTO_INCREMENT,
  event_id         VARCHAR(64)  NOT NULL,
  ticket_number    INT          NOT NULL,
  -- the buyer's generation of the ticket
  gen              INT          NOT NULL,
  seller           VARCHAR(64)  NOT NULL,
  buyer            VARCHAR(64)  NOT NULL,
  stream_id        VARCHAR(41)  NOT NULL,
  at               DATETIME(3)  NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_resold_ticket_gen (event_id, ticket_number, gen),
  KEY ix_resold_seller (event_id, seller)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
