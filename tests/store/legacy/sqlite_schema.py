# Frozen: escalated/store/schema.py as it was at 9bd80e2, the last commit that migrated from
# Python lists. tests/store/test_migrations.py builds a database with it
# the way that code did; never edit it.
"""Named, ordered migrations. Applied ones are recorded in ``migrations``.

Never edit a migration that has shipped; add a new one.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_initial",
        """
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
        """,
    ),
    (
        "0002_web_sessions",
        """
        -- Browser sessions of the web app. Only a hash of the cookie's secret
        -- is kept. The user's token hash at sign-in is kept too: rotating the
        -- token (users token NAME) ends every session it started, without a
        -- write here, because the look-up joins on it.
        CREATE TABLE web_sessions (
            id_hash TEXT PRIMARY KEY,
            user_id TEXT NOT NULL REFERENCES users(id),
            user_token_hash TEXT NOT NULL,
            created_ms INTEGER NOT NULL,
            last_seen_ms INTEGER NOT NULL,
            ended_ms INTEGER
        );
        CREATE INDEX web_sessions_user ON web_sessions(user_id);
        -- Single-use sign-in links (users login-link NAME), by hash.
        CREATE TABLE login_links (
            secret_hash TEXT PRIMARY KEY,
            user_id TEXT NOT NULL REFERENCES users(id),
            user_token_hash TEXT NOT NULL,
            created_ms INTEGER NOT NULL,
            expires_ms INTEGER NOT NULL,
            used_ms INTEGER
        );
        """,
    ),
    (
        "0003_policy_cancel_callback",
        "ALTER TABLE policies ADD COLUMN cancel_callback INTEGER NOT NULL DEFAULT 0",
    ),
    (
        # PostgreSQL's senders (one per replica) claim a delivery before
        # sending it; SQLite has one sender and leaves it NULL.
        "0004_delivery_claims",
        "ALTER TABLE deliveries ADD COLUMN claimed_until_ms INTEGER",
    ),
    (
        # Where a user can be reached (issue #16): an email address (stored
        # lower-cased, so equality is case-insensitive) and a Slack member id.
        # Each is optional and names at most one user of a workspace.
        "0005_user_contacts",
        """
        ALTER TABLE users ADD COLUMN email TEXT;
        ALTER TABLE users ADD COLUMN slack_id TEXT;
        CREATE UNIQUE INDEX users_email ON users(workspace_id, email) WHERE email IS NOT NULL;
        CREATE UNIQUE INDEX users_slack_id ON users(workspace_id, slack_id) WHERE slack_id IS NOT NULL
        """,
    ),
    (
        # Email decision links (issue #16): only a hash of each secret. A link
        # is bound to one escalation, one user and one choice; an email's
        # retry replaces the links of its earlier attempt (replaced_ms).
        "0006_decision_links",
        """
        CREATE TABLE decision_links (
            secret_hash TEXT PRIMARY KEY,
            delivery_id TEXT NOT NULL,
            escalation_id TEXT NOT NULL,
            user_id TEXT NOT NULL REFERENCES users(id),
            choice TEXT NOT NULL,
            created_ms INTEGER NOT NULL,
            expires_ms INTEGER NOT NULL,
            used_ms INTEGER,
            replaced_ms INTEGER
        );
        CREATE INDEX decision_links_by_delivery ON decision_links(delivery_id)
        """,
    ),
    (
        # Reviewer operations (issue #27, CONTRACT §15). ``assignee``: who
        # claimed an escalation or was assigned it (advisory). ``rules``:
        # remembered decisions; a revoked rule keeps its row (the history
        # names every rule and its author) and ``rule_uses`` each escalation
        # a rule decided, written with that resolution.
        "0007_claims_and_rules",
        """
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
            created_ms INTEGER NOT NULL,
            expires_ms INTEGER NOT NULL,
            revoked_by TEXT,
            revoked_ms INTEGER
        );
        CREATE INDEX rules_by_policy ON rules(workspace_id, policy, expires_ms);
        CREATE TABLE rule_uses (
            rule_id TEXT NOT NULL REFERENCES rules(id),
            escalation_id TEXT NOT NULL,
            at_ms INTEGER NOT NULL,
            PRIMARY KEY (rule_id, escalation_id)
        )
        """,
    ),
    (
        # Reviewer operations (CONTRACT §15): reminders, levels, quorum. A
        # policy's as one JSON object (NULL: none); an escalation keeps a copy
        # from its creation, the level it reached, the quorum votes so far, and
        # when the SLA clock next owes it a reminder or a level (nudge_ms,
        # indexed while open: what the clock rebuilds itself from).
        "0008_reminders_levels_quorum",
        """
        ALTER TABLE policies ADD COLUMN review_json TEXT;
        ALTER TABLE escalations ADD COLUMN review_json TEXT;
        ALTER TABLE escalations ADD COLUMN level INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE escalations ADD COLUMN approvals_json TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE escalations ADD COLUMN remind_ms INTEGER;
        ALTER TABLE escalations ADD COLUMN nudge_ms INTEGER;
        CREATE INDEX escalations_nudge ON escalations(nudge_ms) WHERE nudge_ms IS NOT NULL AND status = 'open'
        """,
    ),
]
