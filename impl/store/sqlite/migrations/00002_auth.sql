-- +goose Up
-- Tenants own data-platform stores and set the tier (quotas) of their users.
CREATE TABLE tenants (
    id         TEXT PRIMARY KEY,            -- UUID
    name       TEXT NOT NULL,
    tier       TEXT NOT NULL CHECK (tier IN ('free', 'pro')),
    features   TEXT NOT NULL DEFAULT '{}',  -- JSON object of feature flags, e.g. {"content_search": true}
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE users (
    id            TEXT PRIMARY KEY,         -- UUID
    tenant_id     TEXT NOT NULL REFERENCES tenants (id),
    email         TEXT NOT NULL,
    email_key     TEXT NOT NULL UNIQUE,     -- lower-cased email: unique case-insensitively
    password_hash TEXT NOT NULL,            -- bcrypt
    user_metadata TEXT NOT NULL DEFAULT '{}',
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
) STRICT;
CREATE INDEX users_tenant ON users (tenant_id);

-- A session is one sign-in; its refresh tokens form one rotation family.
CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,            -- UUID, the session_id claim
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    revoked_at TEXT,
    revoked_reason TEXT
) STRICT;
CREATE INDEX sessions_user ON sessions (user_id);

-- Refresh tokens are stored as SHA-256 hashes only.
CREATE TABLE refresh_tokens (
    token_hash BLOB PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    rotated_at TEXT                        -- set when spent; its successor is derived from it
) STRICT;
CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id);

-- Personal access tokens: the secret is stored as a SHA-256 hash only.
CREATE TABLE personal_access_tokens (
    id           TEXT PRIMARY KEY,          -- UUID
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    prefix       TEXT NOT NULL,             -- first characters of the secret, to recognise it
    secret_hash  BLOB NOT NULL UNIQUE,
    created_at   TEXT NOT NULL,
    expires_at   TEXT,
    last_used_at TEXT,
    revoked_at   TEXT
) STRICT;
CREATE INDEX personal_access_tokens_user ON personal_access_tokens (user_id);

-- Access-token signing keys. The newest is used for signing; a key is
-- published (and accepted) until retire_after, which rotation sets so that
-- the last token signed with it has expired by then.
CREATE TABLE signing_keys (
    kid          TEXT PRIMARY KEY,
    alg          TEXT NOT NULL,
    private_key  BLOB NOT NULL,             -- PKCS #8 DER
    created_at   TEXT NOT NULL,
    retire_after TEXT
) STRICT;

-- +goose Down
DROP TABLE signing_keys;
DROP TABLE personal_access_tokens;
DROP TABLE refresh_tokens;
DROP TABLE sessions;
DROP TABLE users;
DROP TABLE tenants;
