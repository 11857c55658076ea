-- Reviewer operations (CONTRACT §15). assignee: who claimed an
-- escalation or was assigned it (advisory). rules: remembered decisions,
-- a revoked rule keeps its row (the history names every rule and its
-- author) and rule_uses each escalation a rule decided, written with
-- that resolution.

ALTER TABLE escalations ADD COLUMN assignee TEXT;
CREATE INDEX escalations_assignee ON escalations(workspace_id, assignee, id) WHERE assignee IS NOT NULL;
CREATE TABLE rules (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    policy TEXT NOT NULL,
    choice TEXT NOT NULL,
    agent_id TEXT,
    subject_type TEXT,
    subject_id TEXT,
    reason TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL,
    revoked_by TEXT,
    revoked_ms BIGINT
);
CREATE INDEX rules_by_policy ON rules(workspace_id, policy, expires_ms);
CREATE TABLE rule_uses (
    rule_id TEXT NOT NULL REFERENCES rules(id),
    escalation_id TEXT NOT NULL,
    at_ms BIGINT NOT NULL,
    PRIMARY KEY (rule_id, escalation_id)
);
