-- +goose Up
-- Folders nest through parent_id; every folder belongs to one user.
CREATE TABLE folders (
    id         TEXT PRIMARY KEY,            -- UUID
    user_id    TEXT NOT NULL,
    name       TEXT NOT NULL,
    parent_id  TEXT REFERENCES folders (id),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX folders_user ON folders (user_id, name);
CREATE INDEX folders_parent ON folders (parent_id);

-- Content items. seq is the rowid the full-text index refers to (stable,
-- unlike the implicit rowid of a table with a text primary key).
CREATE TABLE items (
    seq                INTEGER PRIMARY KEY,
    id                 TEXT NOT NULL UNIQUE,  -- UUID
    user_id            TEXT NOT NULL,
    type               TEXT NOT NULL CHECK (type IN ('note', 'voice_note', 'photo', 'post')),
    title              TEXT NOT NULL,
    body               TEXT NOT NULL,
    summary            TEXT NOT NULL DEFAULT '',
    folder_id          TEXT REFERENCES folders (id),
    tags               TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
    media_kind         TEXT,                         -- audio | image
    media_key          TEXT,                         -- blob key of the upload
    media_content_type TEXT,
    transcription      TEXT,
    ai_summary         TEXT,
    ai_tags            TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
    processing_status  TEXT NOT NULL CHECK (processing_status IN ('pending', 'processing', 'processed', 'failed')),
    processing_error   TEXT,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL
) STRICT;
-- Newest-first listing per user, optionally by type or folder.
CREATE INDEX items_user_created ON items (user_id, created_at DESC, id DESC);
CREATE INDEX items_user_type_created ON items (user_id, type, created_at DESC, id DESC);
CREATE INDEX items_user_folder_created ON items (user_id, folder_id, created_at DESC, id DESC);

-- Items per user, kept by triggers, so the unfiltered list's total is one
-- lookup instead of counting an index of 100k entries.
CREATE TABLE item_counts (
    user_id TEXT PRIMARY KEY,
    n       INTEGER NOT NULL
) STRICT;
-- +goose StatementBegin
CREATE TRIGGER item_counts_insert AFTER INSERT ON items BEGIN
    INSERT INTO item_counts (user_id, n) VALUES (new.user_id, 1)
    ON CONFLICT (user_id) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER item_counts_delete AFTER DELETE ON items BEGIN
    UPDATE item_counts SET n = n - 1 WHERE user_id = old.user_id;
END;
-- +goose StatementEnd

-- Case-insensitive substring search (q) over title, body, summary and
-- transcription: trigram full-text index, kept in sync by triggers.
CREATE VIRTUAL TABLE items_fts USING fts5(
    title, body, summary, transcription,
    content = 'items', content_rowid = 'seq', tokenize = 'trigram'
);
-- +goose StatementBegin
CREATE TRIGGER items_fts_insert AFTER INSERT ON items BEGIN
    INSERT INTO items_fts (rowid, title, body, summary, transcription)
    VALUES (new.seq, new.title, new.body, new.summary, coalesce(new.transcription, ''));
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER items_fts_delete AFTER DELETE ON items BEGIN
    INSERT INTO items_fts (items_fts, rowid, title, body, summary, transcription)
    VALUES ('delete', old.seq, old.title, old.body, old.summary, coalesce(old.transcription, ''));
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER items_fts_update AFTER UPDATE OF title, body, summary, transcription ON items BEGIN
    INSERT INTO items_fts (items_fts, rowid, title, body, summary, transcription)
    VALUES ('delete', old.seq, old.title, old.body, old.summary, coalesce(old.transcription, ''));
    INSERT INTO items_fts (rowid, title, body, summary, transcription)
    VALUES (new.seq, new.title, new.body, new.summary, coalesce(new.transcription, ''));
END;
-- +goose StatementEnd

-- The durable log of content events, for WebSocket replay (?since=). Ids
-- increase in commit order.
CREATE TABLE content_events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    TEXT NOT NULL,
    type       TEXT NOT NULL,
    item_id    TEXT NOT NULL,
    payload    TEXT NOT NULL,               -- JSON of the single-item shape
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX content_events_user ON content_events (user_id, id);
CREATE INDEX content_events_created ON content_events (created_at);

-- +goose Down
DROP TABLE content_events;
DROP TRIGGER item_counts_delete;
DROP TRIGGER item_counts_insert;
DROP TABLE item_counts;
DROP TRIGGER items_fts_update;
DROP TRIGGER items_fts_delete;
DROP TRIGGER items_fts_insert;
DROP TABLE items_fts;
DROP TABLE items;
DROP TABLE folders;
