CREATE TABLE workspaces (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_ms INTEGER NOT NULL
);
CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    name TEXT,
    token_hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER,
    revoked_ms INTEGER
);
CREATE INDEX api_keys_workspace ON api_keys(workspace_id);
CREATE TABLE users (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    groups_json TEXT NOT NULL DEFAULT '[]',
    token_hash TEXT NOT NULL UNIQUE,
    created_ms INTEGER NOT NULL,
    UNIQUE (workspace_id, name)
);
CREATE TABLE policies (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    key TEXT NOT NULL,
    reviewers_json TEXT NOT NULL DEFAULT '[]',
    notify_json TEXT NOT NULL DEFAULT '[]',
    sla_s REAL,
    default_choice TEXT,
    updated_ms INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, key)
);
CREATE TABLE escalations (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    status TEXT NOT NULL,
    policy TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    content_json TEXT NOT NULL,
    resume_url TEXT,
    resume_secret TEXT,
    created_ms INTEGER NOT NULL,
    created_by TEXT NOT NULL,
    deadline_ms INTEGER,
    default_choice TEXT,
    acknowledged_by TEXT,
    acknowledged_ms INTEGER,
    resolution_json TEXT,
    cancellation_json TEXT
);
CREATE INDEX escalations_list ON escalations(workspace_id, id);
CREATE INDEX escalations_status ON escalations(workspace_id, status, id);
CREATE INDEX escalations_run ON escalations(workspace_id, run_id);
-- The SLA clock reads only the live deadlines, in order.
CREATE INDEX escalations_deadline ON escalations(deadline_ms)
    WHERE deadline_ms IS NOT NULL AND status IN ('open', 'acknowledged');
-- Who may see an escalation, fixed at creation from the policy:
-- 'user:NAME', 'group:NAME' or '*' (every user of the workspace).
CREATE TABLE escalation_routes (
    route TEXT NOT NULL,
    escalation_id TEXT NOT NULL,
    PRIMARY KEY (route, escalation_id)
) WITHOUT ROWID;
CREATE INDEX escalation_routes_by_escalation ON escalation_routes(escalation_id);
CREATE TABLE escalation_events (
    seq INTEGER PRIMARY KEY,
    escalation_id TEXT NOT NULL,
    event TEXT NOT NULL,
    by TEXT NOT NULL,
    at_ms INTEGER NOT NULL
);
CREATE INDEX escalation_events_by_escalation ON escalation_events(escalation_id, seq);
CREATE TABLE idempotency_keys (
    workspace_id TEXT NOT NULL,
    key TEXT NOT NULL,
    body_sha256 TEXT NOT NULL,
    status INTEGER NOT NULL,
    response_json TEXT NOT NULL,
    escalation_id TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, key)
);
-- The durable outbox: callbacks and notifications. A row is written
-- in the same transaction as the change that owes it.
CREATE TABLE deliveries (
    id TEXT PRIMARY KEY,
    escalation_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    event TEXT NOT NULL,
    status TEXT NOT NULL,
    body BLOB NOT NULL,
    secret TEXT,
    attempts_json TEXT NOT NULL DEFAULT '[]',
    next_attempt_ms INTEGER,
    created_ms INTEGER NOT NULL
);
CREATE INDEX deliveries_by_escalation ON deliveries(escalation_id);
CREATE INDEX deliveries_due ON deliveries(next_attempt_ms) WHERE status = 'pending';
