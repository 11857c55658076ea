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
