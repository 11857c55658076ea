-- PostgreSQL's senders (one per replica) claim a delivery before
-- sending it, SQLite has one sender and leaves it NULL.

ALTER TABLE deliveries ADD COLUMN claimed_until_ms BIGINT;
