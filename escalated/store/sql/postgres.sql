-- Every SQL statement of the PostgreSQL store, by name: the same names as
-- sqlite.sql where the statement exists there, so "where is the SQL of X"
-- has one answer per dialect. Parameters are named (:name, which the loader
-- spells %(name)s for psycopg).
-- A block starts with `-- name: NAME` (a statement) or `-- part: NAME` (a
-- clause); `{NAME}` is replaced by the block NAME.

-- part: escalation_columns
id, workspace_id, status, policy, agent_id, run_id, content_json, resume_url, resume_secret,
created_ms, created_by, deadline_ms, default_choice, acknowledged_by, acknowledged_ms,
resolution_json, cancellation_json, assignee, review_json, level, approvals_json, remind_ms, nudge_ms

-- The history as one JSON array of [seq, event, by, at_ms], as text (the
-- row converter parses it, as it does SQLite's).
-- part: escalation_with_history
{escalation_columns},
(SELECT coalesce(json_agg(json_build_array(seq, event, by, at_ms) ORDER BY seq), '[]')::text
   FROM escalation_events WHERE escalation_events.escalation_id = escalations.id)

-- part: delivery_columns
id, escalation_id, kind, target, event, status, body, secret, attempts_json, next_attempt_ms, created_ms

-- part: key_columns
id, workspace_id, name, scopes, created_ms, expires_ms, revoked_ms

-- part: user_columns
id, workspace_id, name, role, groups_json, created_ms, email, slack_id

-- part: policy_columns
workspace_id, key, reviewers_json, notify_json, sla_s, default_choice, cancel_callback, review_json

-- == escalations: create and transitions (write jobs) ========================

-- name: find_replay
SELECT body_sha256, status, convert_to(response_json, 'UTF8') FROM idempotency_keys
WHERE workspace_id = :workspace_id AND key = :key AND created_ms > :not_before_ms

-- Claims the key, or takes over one older than the window. Concurrent
-- creates with one key on different replicas: the second waits for the
-- first's COMMIT, then finds a live key, updates nothing and returns no
-- row, and the store answers the first one's replay.
-- name: remember_idempotency_key
INSERT INTO idempotency_keys (workspace_id, key, body_sha256, status, response_json, escalation_id, created_ms)
VALUES (:workspace_id, :key, :body_sha256, :status, :response_json, :escalation_id, :created_ms)
ON CONFLICT (workspace_id, key) DO UPDATE
SET body_sha256 = excluded.body_sha256, status = excluded.status, response_json = excluded.response_json,
    escalation_id = excluded.escalation_id, created_ms = excluded.created_ms
WHERE idempotency_keys.created_ms <= :not_before_ms
RETURNING 1

-- The escalation and all its routes in one statement: each statement a
-- write job sends costs the writer ~50 us of Python (psycopg's cursor,
-- conversion and pipeline), and an executemany of one route cost more.
-- name: create_escalation
WITH created AS (
  INSERT INTO escalations ({escalation_columns})
  VALUES (:id, :workspace_id, :status, :policy, :agent_id, :run_id, :content_json, :resume_url, :resume_secret,
          :created_ms, :created_by, :deadline_ms, :default_choice, NULL, NULL, NULL, NULL, NULL, :review_json, 0, '[]',
          :remind_ms, :nudge_ms)
  RETURNING id
)
INSERT INTO escalation_routes (route, escalation_id) SELECT unnest(:routes::text[]), id FROM created

-- History rows are written at the end of their commit group, under this
-- lock, held to COMMIT: so event numbers (/events ids) rise in commit
-- order across replicas, and a reader past N never misses a later commit
-- with a number below N.
-- name: lock_history
SELECT pg_advisory_xact_lock(7306915596893680492)

-- name: add_history
INSERT INTO escalation_events (escalation_id, event, by, at_ms) VALUES (:escalation_id, :event, :by, :at_ms)

-- name: add_delivery
INSERT INTO deliveries (id, escalation_id, kind, target, event, status, body, secret, next_attempt_ms, created_ms)
VALUES (:id, :escalation_id, :kind, :target, :event, :status, :body, :secret, :next_attempt_ms, :created_ms)

-- name: escalation_status
SELECT status FROM escalations WHERE id = :id

-- Open -> acknowledged: the compare-and-set on status. Under READ
-- COMMITTED a concurrent update of the row makes this wait for that
-- COMMIT, then re-check the condition against the new row.
-- name: acknowledge
UPDATE escalations SET status = 'acknowledged', acknowledged_by = :by, acknowledged_ms = :at_ms
WHERE id = :id AND status = 'open'

-- Open/acknowledged -> resolved: every decision and breach, on every replica.
-- name: resolve
UPDATE escalations SET status = 'resolved', resolution_json = :record_json
WHERE id = :id AND status IN ('open', 'acknowledged')

-- == reviewer operations (CONTRACT §15) =====================================

-- The quorum votes of a live escalation, read in the transaction that adds one.
-- FOR UPDATE: a concurrent vote (another replica) waits for this one's COMMIT
-- and then reads the votes it added, so the last two votes cannot both miss the quorum.
-- name: approvals_of_live
SELECT approvals_json FROM escalations WHERE id = :id AND status IN ('open', 'acknowledged') FOR UPDATE

-- name: set_approvals
UPDATE escalations SET approvals_json = :approvals_json WHERE id = :id AND status IN ('open', 'acknowledged')

-- A reminder or a level: compare-and-set on the nudge the clock read, so a
-- pass that read a stale row (or a second clock) changes nothing.
-- name: nudge
UPDATE escalations SET level = :level, remind_ms = :remind_ms, nudge_ms = :nudge_ms
WHERE id = :id AND status = 'open' AND nudge_ms = :expected_ms

-- name: add_route_if_new
INSERT INTO escalation_routes (route, escalation_id) VALUES (:route, :escalation_id) ON CONFLICT DO NOTHING

-- Open escalations owed a reminder or a level by then, from the partial index escalations_nudge.
-- name: nudges_until
SELECT id FROM escalations WHERE nudge_ms IS NOT NULL AND status = 'open' AND nudge_ms <= :until_ms
ORDER BY nudge_ms LIMIT :limit

-- name: next_nudge
SELECT min(nudge_ms) FROM escalations WHERE nudge_ms IS NOT NULL AND status = 'open'

-- name: cancel
UPDATE escalations SET status = 'cancelled', cancellation_json = :record_json
WHERE id = :id AND status IN ('open', 'acknowledged')

-- == escalations: reads =======================================================

-- name: get_escalation
SELECT {escalation_with_history} FROM escalations WHERE id = :id

-- part: in_workspace
 AND workspace_id = :workspace_id

-- part: routed_to
 AND id IN (SELECT escalation_id FROM escalation_routes WHERE route = ANY(:routes))

-- name: get_escalations
SELECT {escalation_with_history} FROM escalations WHERE id = ANY(:ids)

-- name: list_escalations
SELECT {escalation_with_history} FROM escalations WHERE workspace_id = :workspace_id

-- part: with_status
 AND status = :status

-- part: with_policy
 AND policy = :policy

-- part: with_agent_id
 AND agent_id = :agent_id

-- part: with_run_id
 AND run_id = :run_id

-- part: after_id
 AND id > :cursor

-- part: before_id
 AND id < :cursor

-- part: oldest_first
 ORDER BY id ASC LIMIT :limit

-- part: newest_first
 ORDER BY id DESC LIMIT :limit

-- Committed history after a number, oldest first, with each escalation as
-- it is now: what the doorbell's reader turns into bus events. Numbers rise
-- in commit order (see lock_history), so "after N" never skips a commit.
-- name: changes_after
SELECT escalation_events.seq, escalation_events.event, escalation_events.at_ms, {escalation_with_history}
FROM escalation_events JOIN escalations ON escalations.id = escalation_events.escalation_id
WHERE escalation_events.seq > :seq
ORDER BY escalation_events.seq LIMIT :limit

-- name: last_change
SELECT coalesce(max(seq), 0) FROM escalation_events

-- name: deadlines_until
SELECT deadline_ms, id FROM escalations
WHERE deadline_ms IS NOT NULL AND status IN ('open', 'acknowledged') AND deadline_ms <= :until_ms
ORDER BY deadline_ms LIMIT :limit

-- name: deadlines_between
SELECT deadline_ms, id FROM escalations
WHERE deadline_ms IS NOT NULL AND status IN ('open', 'acknowledged') AND deadline_ms <= :until_ms AND deadline_ms > :after_ms
ORDER BY deadline_ms LIMIT :limit

-- == the outbox ===============================================================

-- Pending deliveries in due order, skipping those in flight here. A row
-- another replica has claimed is due, for this one, when the claim lapses.
-- How many deliveries wait for an attempt: /metrics' escalated_deliveries_pending
-- (read through the partial index deliveries_due).
-- name: count_pending_deliveries
SELECT COUNT(*) FROM deliveries WHERE status = 'pending'

-- name: pending_deliveries
SELECT id, escalation_id, kind, target, event, status, body, secret, attempts_json,
       greatest(next_attempt_ms, claimed_until_ms), created_ms
FROM deliveries
WHERE status = 'pending' AND NOT (id = ANY(:exclude))
ORDER BY greatest(next_attempt_ms, claimed_until_ms) LIMIT :limit

-- Not before ``until``: the sender's pause of a receiver that keeps failing
-- (engine/breaker.py); not an attempt, so nothing else changes.
-- name: defer_deliveries
UPDATE deliveries SET next_attempt_ms = greatest(next_attempt_ms, :until_ms)
WHERE status = 'pending' AND id = ANY(:ids)

-- name: deliveries_of_escalation
SELECT {delivery_columns} FROM deliveries WHERE escalation_id = :escalation_id
ORDER BY kind <> 'callback', created_ms, id

-- A claim is a lease: claimed_until_ms, whose value is also the claim's
-- fencing token. SKIP LOCKED: two senders claiming at once take different
-- rows instead of queueing on each other.
-- name: claim_deliveries
UPDATE deliveries SET claimed_until_ms = :token
WHERE id IN (
    SELECT id FROM deliveries
    WHERE id = ANY(:ids) AND status = 'pending' AND next_attempt_ms <= :at_ms
      AND (claimed_until_ms IS NULL OR claimed_until_ms <= :at_ms)
    FOR UPDATE SKIP LOCKED
)
RETURNING id

-- Recorded only while the claim's token still stands: a replica whose
-- lease lapsed and was re-claimed cannot record over the newer attempt.
-- name: record_attempt
UPDATE deliveries
SET attempts_json = (attempts_json::jsonb || jsonb_build_array(:attempt_json::jsonb))::text, status = :status, next_attempt_ms = :next_attempt_ms,
    claimed_until_ms = NULL
WHERE id = :id AND claimed_until_ms = :token

-- name: callback_of_escalation
SELECT {delivery_columns} FROM deliveries WHERE escalation_id = :escalation_id AND kind = 'callback'

-- name: get_delivery
SELECT {delivery_columns} FROM deliveries WHERE id = :id

-- name: requeue_delivery
UPDATE deliveries SET status = 'pending', next_attempt_ms = :at_ms, created_ms = :at_ms WHERE id = :id

-- == migrations ===============================================================

-- Created before the list runs, so "what ran" can be read first.
-- name: create_migrations_table
CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_ms BIGINT NOT NULL)

-- Any fixed 64-bit number shared by every replica; this one spells "escalate".
-- name: lock_migrations
SELECT pg_advisory_xact_lock(7310295890233750629)

-- name: applied_migrations
SELECT name FROM migrations

-- name: record_migration
INSERT INTO migrations (name, applied_ms) VALUES (:name, :applied_ms)

-- name: ensure_workspace
INSERT INTO workspaces (id, name, created_ms) VALUES (:id, :name, :created_ms) ON CONFLICT (name) DO NOTHING

-- == workspaces ===============================================================

-- name: workspace_by_name
SELECT id, name FROM workspaces WHERE name = :name

-- name: create_workspace
INSERT INTO workspaces (id, name, created_ms) VALUES (:id, :name, :created_ms)

-- name: list_workspaces
SELECT id, name FROM workspaces ORDER BY name

-- == API keys =================================================================

-- name: key_by_hash
SELECT {key_columns} FROM api_keys WHERE token_hash = :token_hash

-- name: key_by_id
SELECT {key_columns} FROM api_keys WHERE id = :id AND workspace_id = :workspace_id

-- name: keys_of_workspace
SELECT {key_columns} FROM api_keys WHERE workspace_id = :workspace_id ORDER BY id

-- name: all_keys
SELECT {key_columns} FROM api_keys ORDER BY id

-- name: create_key
INSERT INTO api_keys (id, workspace_id, name, token_hash, scopes, created_ms, expires_ms)
VALUES (:id, :workspace_id, :name, :token_hash, :scopes, :created_ms, :expires_ms)

-- name: revoke_key
UPDATE api_keys SET revoked_ms = :at_ms WHERE id = :id AND revoked_ms IS NULL

-- name: revoke_key_in_workspace
UPDATE api_keys SET revoked_ms = :at_ms WHERE id = :id AND revoked_ms IS NULL AND workspace_id = :workspace_id

-- name: key_exists
SELECT 1 FROM api_keys WHERE id = :id

-- Serialises first starts of several replicas: one bootstrap key, not one each.
-- name: lock_bootstrap
SELECT pg_advisory_xact_lock(7306915596893680491)

-- name: workspace_has_key
SELECT 1 FROM api_keys WHERE workspace_id = :workspace_id LIMIT 1

-- == users ====================================================================

-- name: user_by_hash
SELECT {user_columns} FROM users WHERE token_hash = :token_hash

-- A second add of the same name (another replica at the same moment) meets
-- the UNIQUE (workspace_id, name) and fails, as SQLite's does.
-- name: user_exists
SELECT 1 FROM users WHERE workspace_id = :workspace_id AND name = :name

-- name: create_user
INSERT INTO users (id, workspace_id, name, role, groups_json, token_hash, created_ms, email, slack_id)
VALUES (:id, :workspace_id, :name, :role, :groups_json, :token_hash, :created_ms, :email, :slack_id)

-- Addresses are stored lower-cased (domain/contacts.py), so equality is case-insensitive.
-- name: user_by_email
SELECT {user_columns} FROM users WHERE workspace_id = :workspace_id AND email = :email

-- name: user_by_slack_id
SELECT {user_columns} FROM users WHERE workspace_id = :workspace_id AND slack_id = :slack_id

-- name: rotate_user_token
UPDATE users SET token_hash = :token_hash WHERE workspace_id = :workspace_id AND name = :name

-- name: users_of_workspace
SELECT {user_columns} FROM users WHERE workspace_id = :workspace_id ORDER BY name

-- == policies =================================================================

-- name: get_policy
SELECT {policy_columns} FROM policies WHERE workspace_id = :workspace_id AND key = :key

-- name: put_policy
INSERT INTO policies ({policy_columns}, updated_ms) VALUES (:workspace_id, :key, :reviewers_json, :notify_json, :sla_s, :default_choice, :cancel_callback, :review_json, :updated_ms)
ON CONFLICT (workspace_id, key) DO UPDATE
SET reviewers_json = excluded.reviewers_json, notify_json = excluded.notify_json, sla_s = excluded.sla_s,
    default_choice = excluded.default_choice, cancel_callback = excluded.cancel_callback, review_json = excluded.review_json,
    updated_ms = excluded.updated_ms

-- name: policies_of_workspace
SELECT {policy_columns} FROM policies WHERE workspace_id = :workspace_id ORDER BY key

-- name: delete_policy
DELETE FROM policies WHERE workspace_id = :workspace_id AND key = :key

-- name: count_by_status
SELECT status, COUNT(*) FROM escalations WHERE workspace_id = :workspace_id

-- part: group_by_status
 GROUP BY status

-- == web sessions and sign-in links ==========================================

-- part: user_columns_of_u
u.id, u.workspace_id, u.name, u.role, u.groups_json, u.created_ms, u.email, u.slack_id

-- name: session_user
SELECT {user_columns_of_u}, s.created_ms, s.last_seen_ms FROM web_sessions s
JOIN users u ON u.id = s.user_id AND u.token_hash = s.user_token_hash
WHERE s.id_hash = :id_hash AND s.ended_ms IS NULL

-- name: start_session
INSERT INTO web_sessions (id_hash, user_id, user_token_hash, created_ms, last_seen_ms) VALUES (:id_hash, :user_id, :user_token_hash, :at_ms, :at_ms)

-- name: touch_session
UPDATE web_sessions SET last_seen_ms = :at_ms WHERE id_hash = :id_hash AND ended_ms IS NULL

-- name: end_session
UPDATE web_sessions SET ended_ms = :at_ms WHERE id_hash = :id_hash AND ended_ms IS NULL

-- name: user_id_and_token_hash
SELECT id, token_hash FROM users WHERE workspace_id = :workspace_id AND name = :name

-- name: create_login_link
INSERT INTO login_links (secret_hash, user_id, user_token_hash, created_ms, expires_ms) VALUES (:secret_hash, :user_id, :user_token_hash, :at_ms, :expires_ms)

-- Single use across replicas: the compare-and-set on used_ms.
-- name: use_login_link
UPDATE login_links SET used_ms = :at_ms WHERE secret_hash = :secret_hash AND used_ms IS NULL AND expires_ms > :at_ms

-- name: login_link_user
SELECT {user_columns_of_u}, u.token_hash FROM login_links l
JOIN users u ON u.id = l.user_id AND u.token_hash = l.user_token_hash WHERE l.secret_hash = :secret_hash

-- == email decision links (issue #16) ========================================
-- Only hashes of the secrets. The sender mints an email's links when it
-- sends it, replacing those of the email's earlier attempt, if any.

-- name: replace_decision_links
UPDATE decision_links SET replaced_ms = :at_ms WHERE delivery_id = :delivery_id AND used_ms IS NULL AND replaced_ms IS NULL

-- name: add_decision_link
INSERT INTO decision_links (secret_hash, delivery_id, escalation_id, user_id, choice, created_ms, expires_ms)
VALUES (:secret_hash, :delivery_id, :escalation_id, :user_id, :choice, :created_ms, :expires_ms)

-- The link's columns, then its user's row (user_columns).
-- name: decision_link
SELECT l.escalation_id, l.choice, l.created_ms, l.expires_ms, l.used_ms, l.replaced_ms, {user_columns_of_u}
FROM decision_links l JOIN users u ON u.id = l.user_id WHERE l.secret_hash = :secret_hash

-- The link's compare-and-set: once, unreplaced, unexpired.
-- name: use_decision_link
UPDATE decision_links SET used_ms = :at_ms
WHERE secret_hash = :secret_hash AND used_ms IS NULL AND replaced_ms IS NULL AND expires_ms > :at_ms

-- == reviewer operations: claims and remembered decisions (CONTRACT §15) =====

-- Claim and assign: who works on it (advisory); only while it is live.
-- name: assign
UPDATE escalations SET assignee = :assignee WHERE id = :id AND status IN ('open', 'acknowledged')

-- part: with_assignee
 AND assignee = :assignee

-- part: rule_columns
id, workspace_id, policy, choice, agent_id, subject_type, subject_id, reason, created_by, created_ms,
expires_ms, revoked_by, revoked_ms

-- name: add_rule
INSERT INTO rules ({rule_columns}) VALUES (:id, :workspace_id, :policy, :choice, :agent_id, :subject_type, :subject_id, :reason, :created_by, :created_ms, :expires_ms, NULL, NULL)

-- A rule with its uses as one JSON array of [escalation_id, at_ms].
-- part: rule_with_uses
{rule_columns},
(SELECT coalesce(json_agg(json_build_array(escalation_id, at_ms) ORDER BY at_ms), '[]')::text
   FROM rule_uses WHERE rule_uses.rule_id = rules.id)

-- name: rules_of_workspace
SELECT {rule_with_uses} FROM rules WHERE workspace_id = :workspace_id ORDER BY id DESC

-- name: rule_by_id
SELECT {rule_with_uses} FROM rules WHERE id = :id AND workspace_id = :workspace_id

-- The rules that may decide a new escalation of a policy, newest first.
-- name: active_rules
SELECT {rule_columns}, '[]' FROM rules
WHERE workspace_id = :workspace_id AND policy = :policy AND revoked_ms IS NULL AND expires_ms > :at_ms
ORDER BY id DESC

-- Live escalations created while an unrevoked rule of their policy (and of
-- their agent, when the rule names one) was active: a create's rule decision
-- runs after its commit, so a process stopped in between leaves these. The
-- core checks the rest of each rule's match. Oldest first.
-- name: unanswered_by_rules
SELECT DISTINCT e.created_ms, e.id FROM rules r
JOIN escalations e ON e.workspace_id = r.workspace_id AND e.policy = r.policy
WHERE r.revoked_ms IS NULL AND r.expires_ms > :since_ms
  AND e.status IN ('open', 'acknowledged')
  AND e.created_ms >= :since_ms AND e.created_ms <= :before_ms
  AND e.created_ms >= r.created_ms AND e.created_ms < r.expires_ms
  AND (r.agent_id IS NULL OR r.agent_id = e.agent_id)
ORDER BY e.created_ms, e.id
LIMIT :limit

-- name: revoke_rule
UPDATE rules SET revoked_by = :by, revoked_ms = :at_ms WHERE id = :id AND workspace_id = :workspace_id AND revoked_ms IS NULL

-- name: add_rule_use
INSERT INTO rule_uses (rule_id, escalation_id, at_ms) VALUES (:rule_id, :escalation_id, :at_ms)
