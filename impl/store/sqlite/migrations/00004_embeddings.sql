-- +goose Up
-- One embedding per item, with the model that made it: vectors of another
-- model are re-embedded lazily when the model changes.
CREATE TABLE item_embeddings (
    item_id    TEXT PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL,
    model      TEXT NOT NULL,
    dim        INTEGER NOT NULL,
    vector     BLOB NOT NULL,               -- little-endian float32 × dim
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX item_embeddings_user_model ON item_embeddings (user_id, model);

-- +goose Down
DROP TABLE item_embeddings;
