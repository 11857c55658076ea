-- Where a user can be reached: an email address (stored lower-cased,
-- so equality is case-insensitive) and a Slack member id. Each is
-- optional and names at most one user of a workspace.

ALTER TABLE users ADD COLUMN email TEXT;
ALTER TABLE users ADD COLUMN slack_id TEXT;
CREATE UNIQUE INDEX users_email ON users(workspace_id, email) WHERE email IS NOT NULL;
CREATE UNIQUE INDEX users_slack_id ON users(workspace_id, slack_id) WHERE slack_id IS NOT NULL;
