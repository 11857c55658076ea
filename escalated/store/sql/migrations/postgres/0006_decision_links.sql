-- Email decision links: only a hash of each secret. A link is bound to
-- one escalation, one user and one choice, and an email's retry replaces
-- the links of its earlier attempt (replaced_ms).

CREATE TABLE decision_links (
    secret_hash TEXT PRIMARY KEY,
    delivery_id TEXT NOT NULL,
    escalation_id TEXT NOT NULL,
    user_id TEXT NOT NULL REFERENCES users(id),
    choice TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL,
    used_ms BIGINT,
    replaced_ms BIGINT
);
CREATE INDEX decision_links_by_delivery ON decision_links(delivery_id);
