package sqlite

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/store"
)

// timeLayout stores times as fixed-width UTC text, so that text order is
// time order in SQL comparisons.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func fmtTimePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return fmtTime(*t)
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t, nil
}

func parseTimePtr(ns sql.NullString) (*time.Time, error) {
	if !ns.Valid {
		return nil, nil
	}
	t, err := parseTime(ns.String)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// isUniqueViolation reports a UNIQUE or PRIMARY KEY constraint failure.
func isUniqueViolation(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// inTx runs fn in a transaction (BEGIN IMMEDIATE, see dsn), committing when
// it returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// queryer is what *sql.DB and *sql.Tx share.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// rowScanner is what *sql.Row and *sql.Rows share.
type rowScanner interface{ Scan(...any) error }

// collect runs a query and scans every row; what names the query in errors.
// The result is never nil, so callers can return it as an empty list.
func collect[T any](ctx context.Context, q queryer, what string, scan func(rowScanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// ─── tenants ───

// CreateTenant implements store.AuthStore.
func (s *Store) CreateTenant(ctx context.Context, t store.Tenant) error {
	return insertTenant(ctx, s.db, t)
}

func insertTenant(ctx context.Context, q queryer, t store.Tenant) error {
	features, err := json.Marshal(t.Features)
	if err != nil {
		return fmt.Errorf("tenant features: %w", err)
	}
	if t.Features == nil {
		features = []byte("{}")
	}
	_, err = q.ExecContext(ctx, `INSERT INTO tenants (id, name, tier, features, created_at) VALUES (?, ?, ?, ?, ?)`,
		t.ID.String(), t.Name, t.Tier, string(features), fmtTime(t.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert tenant: %w", err)
	}
	return nil
}

// GetTenant implements store.AuthStore.
func (s *Store) GetTenant(ctx context.Context, id uuid.UUID) (store.Tenant, error) {
	var t store.Tenant
	var idText, features, created string
	err := s.db.QueryRowContext(ctx, `SELECT id, name, tier, features, created_at FROM tenants WHERE id = ?`, id.String()).
		Scan(&idText, &t.Name, &t.Tier, &features, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return t, store.ErrNotFound
	}
	if err != nil {
		return t, fmt.Errorf("get tenant: %w", err)
	}
	t.ID = id
	if err := json.Unmarshal([]byte(features), &t.Features); err != nil {
		return t, fmt.Errorf("tenant features: %w", err)
	}
	if t.CreatedAt, err = parseTime(created); err != nil {
		return t, err
	}
	return t, nil
}

// SetTenantFeature implements store.AuthStore.
func (s *Store) SetTenantFeature(ctx context.Context, id uuid.UUID, feature string, enabled bool) error {
	res, err := s.db.ExecContext(ctx, `UPDATE tenants SET features = json_set(features, '$.' || ?, json(?)) WHERE id = ?`,
		feature, fmt.Sprint(enabled), id.String())
	if err != nil {
		return fmt.Errorf("set tenant feature: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// CountTenants implements store.AuthStore.
func (s *Store) CountTenants(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM tenants`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count tenants: %w", err)
	}
	return n, nil
}

// ─── users ───

// CreateUser implements store.AuthStore.
func (s *Store) CreateUser(ctx context.Context, u store.User) error {
	return insertUser(ctx, s.db, u)
}

// CreateTenantAndUser implements store.AuthStore.
func (s *Store) CreateTenantAndUser(ctx context.Context, t store.Tenant, u store.User) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := insertTenant(ctx, tx, t); err != nil {
			return err
		}
		return insertUser(ctx, tx, u)
	})
}

func insertUser(ctx context.Context, q queryer, u store.User) error {
	meta, err := json.Marshal(u.UserMetadata)
	if err != nil || u.UserMetadata == nil {
		meta = []byte("{}")
	}
	_, err = q.ExecContext(ctx, `INSERT INTO users (id, tenant_id, email, email_key, password_hash, user_metadata, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		u.ID.String(), u.TenantID.String(), u.Email, emailKey(u.Email), u.PasswordHash, string(meta),
		fmtTime(u.CreatedAt), fmtTime(u.UpdatedAt))
	if isUniqueViolation(err) {
		return store.ErrConflict
	}
	if err != nil {
		if strings.Contains(err.Error(), "FOREIGN KEY") {
			return fmt.Errorf("insert user: tenant %s: %w", u.TenantID, store.ErrNotFound)
		}
		return fmt.Errorf("insert user: %w", err)
	}
	return nil
}

// emailKey is the case-insensitive identity of an email address.
func emailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

const userColumns = `id, tenant_id, email, password_hash, user_metadata, created_at, updated_at`

func scanUser(row rowScanner) (store.User, error) {
	var u store.User
	var meta string
	err := row.Scan(&u.ID, &u.TenantID, &u.Email, &u.PasswordHash, &meta, timeCol{&u.CreatedAt}, timeCol{&u.UpdatedAt})
	if errors.Is(err, sql.ErrNoRows) {
		return u, store.ErrNotFound
	}
	if err != nil {
		return u, fmt.Errorf("scan user: %w", err)
	}
	if err := json.Unmarshal([]byte(meta), &u.UserMetadata); err != nil {
		return u, fmt.Errorf("user metadata: %w", err)
	}
	return u, nil
}

// GetUser implements store.AuthStore.
func (s *Store) GetUser(ctx context.Context, id uuid.UUID) (store.User, error) {
	return scanUser(s.db.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id.String()))
}

// GetUserByEmail implements store.AuthStore.
func (s *Store) GetUserByEmail(ctx context.Context, email string) (store.User, error) {
	return scanUser(s.db.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE email_key = ?`, emailKey(email)))
}

// ─── sessions and refresh tokens ───

// CreateSession implements store.AuthStore.
func (s *Store) CreateSession(ctx context.Context, sess store.Session, refreshHash []byte, expiresAt time.Time) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, user_id, created_at) VALUES (?, ?, ?)`,
			sess.ID.String(), sess.UserID.String(), fmtTime(sess.CreatedAt)); err != nil {
			return fmt.Errorf("insert session: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at) VALUES (?, ?, ?, ?)`,
			refreshHash, sess.ID.String(), fmtTime(sess.CreatedAt), fmtTime(expiresAt)); err != nil {
			return fmt.Errorf("insert refresh token: %w", err)
		}
		return nil
	})
}

func scanSession(row rowScanner) (store.Session, error) {
	var sess store.Session
	err := row.Scan(&sess.ID, &sess.UserID, timeCol{&sess.CreatedAt}, nullTimeCol{&sess.RevokedAt})
	if errors.Is(err, sql.ErrNoRows) {
		return sess, store.ErrNotFound
	}
	if err != nil {
		return sess, fmt.Errorf("scan session: %w", err)
	}
	return sess, nil
}

// GetSession implements store.AuthStore.
func (s *Store) GetSession(ctx context.Context, id uuid.UUID) (store.Session, error) {
	return scanSession(s.db.QueryRowContext(ctx, `SELECT id, user_id, created_at, revoked_at FROM sessions WHERE id = ?`, id.String()))
}

// RotateRefreshToken implements store.AuthStore. It runs in one IMMEDIATE
// transaction, so concurrent refreshes with the same token are serialised:
// the first rotates, the others see a token spent within the grace period
// and get the same successor — never two divergent families.
func (s *Store) RotateRefreshToken(ctx context.Context, req store.RotateRequest) (store.RotateResult, error) {
	var res store.RotateResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var sessionID, expires string
		var rotated sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT session_id, expires_at, rotated_at FROM refresh_tokens WHERE token_hash = ?`,
			req.PresentedHash).Scan(&sessionID, &expires, &rotated)
		if errors.Is(err, sql.ErrNoRows) {
			res.Outcome = store.RefreshNotFound
			return nil
		}
		if err != nil {
			return fmt.Errorf("find refresh token: %w", err)
		}
		sess, err := scanSession(tx.QueryRowContext(ctx, `SELECT id, user_id, created_at, revoked_at FROM sessions WHERE id = ?`, sessionID))
		if err != nil {
			return err
		}
		res.Session = sess
		expiresAt, err := parseTime(expires)
		if err != nil {
			return err
		}
		rotatedAt, err := parseTimePtr(rotated)
		if err != nil {
			return err
		}
		switch {
		case sess.RevokedAt != nil:
			res.Outcome = store.RefreshSessionExpired
			return nil
		case rotatedAt != nil && req.Now.Sub(*rotatedAt) <= req.Grace:
			res.Outcome = store.RefreshReusedInGrace
		case rotatedAt != nil:
			// Re-use of a spent token after the grace period: assume theft,
			// revoke the whole family.
			if _, err := tx.ExecContext(ctx, `UPDATE sessions SET revoked_at = ?, revoked_reason = 'refresh_token_reuse' WHERE id = ?`,
				fmtTime(req.Now), sessionID); err != nil {
				return fmt.Errorf("revoke session: %w", err)
			}
			res.Outcome = store.RefreshReuseDetected
			return nil
		case !req.Now.Before(expiresAt):
			res.Outcome = store.RefreshSessionExpired
			return nil
		default:
			if _, err := tx.ExecContext(ctx, `UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ?`,
				fmtTime(req.Now), req.PresentedHash); err != nil {
				return fmt.Errorf("spend refresh token: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at) VALUES (?, ?, ?, ?)`,
				req.SuccessorHash, sessionID, fmtTime(req.Now), fmtTime(req.Now.Add(req.TTL))); err != nil {
				return fmt.Errorf("insert successor: %w", err)
			}
			res.Outcome = store.RefreshRotated
		}
		res.User, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, sess.UserID.String()))
		return err
	})
	return res, err
}

// RevokeSessions implements store.AuthStore.
func (s *Store) RevokeSessions(ctx context.Context, userID uuid.UUID, only, keep uuid.UUID, reason string, now time.Time) error {
	q := `UPDATE sessions SET revoked_at = ?, revoked_reason = ? WHERE user_id = ? AND revoked_at IS NULL`
	args := []any{fmtTime(now), reason, userID.String()}
	if only != uuid.Nil {
		q += ` AND id = ?`
		args = append(args, only.String())
	}
	if keep != uuid.Nil {
		q += ` AND id <> ?`
		args = append(args, keep.String())
	}
	if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("revoke sessions: %w", err)
	}
	return nil
}

// ─── personal access tokens ───

// CreatePersonalAccessToken implements store.AuthStore.
func (s *Store) CreatePersonalAccessToken(ctx context.Context, p store.PersonalAccessToken) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO personal_access_tokens (id, user_id, name, prefix, secret_hash, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		p.ID.String(), p.UserID.String(), p.Name, p.Prefix, p.SecretHash, fmtTime(p.CreatedAt), fmtTimePtr(p.ExpiresAt))
	if err != nil {
		return fmt.Errorf("insert personal access token: %w", err)
	}
	return nil
}

const patColumns = `id, user_id, name, prefix, secret_hash, created_at, expires_at, last_used_at, revoked_at`

func scanPAT(row rowScanner) (store.PersonalAccessToken, error) {
	var p store.PersonalAccessToken
	err := row.Scan(&p.ID, &p.UserID, &p.Name, &p.Prefix, &p.SecretHash, timeCol{&p.CreatedAt},
		nullTimeCol{&p.ExpiresAt}, nullTimeCol{&p.LastUsedAt}, nullTimeCol{&p.RevokedAt})
	if errors.Is(err, sql.ErrNoRows) {
		return p, store.ErrNotFound
	}
	if err != nil {
		return p, fmt.Errorf("scan personal access token: %w", err)
	}
	return p, nil
}

// ListPersonalAccessTokens implements store.AuthStore: the user's tokens
// that are not revoked, newest first.
func (s *Store) ListPersonalAccessTokens(ctx context.Context, userID uuid.UUID) ([]store.PersonalAccessToken, error) {
	return collect(ctx, s.db, "list personal access tokens", scanPAT, `SELECT `+patColumns+` FROM personal_access_tokens
		WHERE user_id = ? AND revoked_at IS NULL ORDER BY created_at DESC, id`, userID.String())
}

// GetPersonalAccessTokenByHash implements store.AuthStore.
func (s *Store) GetPersonalAccessTokenByHash(ctx context.Context, hash []byte) (store.PersonalAccessToken, error) {
	return scanPAT(s.db.QueryRowContext(ctx, `SELECT `+patColumns+` FROM personal_access_tokens WHERE secret_hash = ?`, hash))
}

// RevokePersonalAccessToken implements store.AuthStore.
func (s *Store) RevokePersonalAccessToken(ctx context.Context, userID, id uuid.UUID, now time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE personal_access_tokens SET revoked_at = ?
		WHERE id = ? AND user_id = ? AND revoked_at IS NULL`, fmtTime(now), id.String(), userID.String())
	if err != nil {
		return fmt.Errorf("revoke personal access token: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// TouchPersonalAccessToken implements store.AuthStore.
func (s *Store) TouchPersonalAccessToken(ctx context.Context, id uuid.UUID, now time.Time, interval time.Duration) error {
	_, err := s.db.ExecContext(ctx, `UPDATE personal_access_tokens SET last_used_at = ?
		WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)`, fmtTime(now), id.String(), fmtTime(now.Add(-interval)))
	if err != nil {
		return fmt.Errorf("touch personal access token: %w", err)
	}
	return nil
}

// ─── signing keys ───

// SigningKeys implements store.AuthStore.
func (s *Store) SigningKeys(ctx context.Context, now time.Time) ([]store.SigningKey, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT kid, alg, private_key, created_at, retire_after FROM signing_keys
		WHERE retire_after IS NULL OR retire_after > ? ORDER BY created_at DESC, rowid DESC`, fmtTime(now))
	if err != nil {
		return nil, fmt.Errorf("list signing keys: %w", err)
	}
	defer rows.Close()
	var out []store.SigningKey
	for rows.Next() {
		var k store.SigningKey
		var created string
		var retire sql.NullString
		if err := rows.Scan(&k.KID, &k.Alg, &k.PrivateKey, &created, &retire); err != nil {
			return nil, fmt.Errorf("scan signing key: %w", err)
		}
		if k.CreatedAt, err = parseTime(created); err != nil {
			return nil, err
		}
		if k.RetireAfter, err = parseTimePtr(retire); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// RotateSigningKeys implements store.AuthStore.
func (s *Store) RotateSigningKeys(ctx context.Context, k store.SigningKey, retireAfter time.Time) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE signing_keys SET retire_after = ? WHERE retire_after IS NULL`, fmtTime(retireAfter)); err != nil {
			return fmt.Errorf("retire signing keys: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO signing_keys (kid, alg, private_key, created_at) VALUES (?, ?, ?, ?)`,
			k.KID, k.Alg, k.PrivateKey, fmtTime(k.CreatedAt)); err != nil {
			return fmt.Errorf("insert signing key: %w", err)
		}
		return nil
	})
}

// ─── secrets ───

// Secret implements store.AuthStore.
func (s *Store) Secret(ctx context.Context, name string, generate func() ([]byte, error)) ([]byte, error) {
	key := "secret:" + name
	var out []byte
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var encoded string
		err := tx.QueryRowContext(ctx, `SELECT value FROM strata_meta WHERE key = ?`, key).Scan(&encoded)
		if err == nil {
			out, err = base64.StdEncoding.DecodeString(encoded)
			return err
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read secret: %w", err)
		}
		if out, err = generate(); err != nil {
			return fmt.Errorf("generate secret: %w", err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO strata_meta (key, value) VALUES (?, ?)`, key, base64.StdEncoding.EncodeToString(out))
		return err
	})
	return out, err
}
