package server

import (
	"strings"
	"testing"
	"time"
)

// TestNormalizeTokenLifetimes: the token lifetimes and the leeway default to
// the spec's values and can only be shortened.
func TestNormalizeTokenLifetimes(t *testing.T) {
	t.Parallel()
	c, err := Config{}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	if c.AccessTokenTTL != time.Hour || c.RefreshTokenTTL != 30*24*time.Hour || c.TokenLeeway != 30*time.Second {
		t.Fatalf("defaults: access %v refresh %v leeway %v", c.AccessTokenTTL, c.RefreshTokenTTL, c.TokenLeeway)
	}
	c, err = Config{AccessTokenTTL: 5 * time.Second, RefreshTokenTTL: time.Minute, TokenLeeway: time.Second}.normalize()
	if err != nil || c.AccessTokenTTL != 5*time.Second || c.RefreshTokenTTL != time.Minute || c.TokenLeeway != time.Second {
		t.Fatalf("shortened: %v %+v", err, c)
	}
	for _, tc := range []struct {
		cfg  Config
		flag string
	}{
		{Config{AccessTokenTTL: 2 * time.Hour}, "--access-token-ttl"},
		{Config{AccessTokenTTL: -time.Second}, "--access-token-ttl"},
		{Config{RefreshTokenTTL: 31 * 24 * time.Hour}, "--refresh-token-ttl"},
		{Config{TokenLeeway: time.Minute}, "--token-leeway"},
	} {
		if _, err := tc.cfg.normalize(); err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%+v: error %v, want one naming %s", tc.cfg, err, tc.flag)
		}
	}
}
