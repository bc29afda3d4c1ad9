package connectors

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSealer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := OpenSealer(dir)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", info, err)
	}
	sealed, err := s.Seal("service-role-secret", "c1/service_role_key")
	if err != nil || !IsSealed(sealed) || strings.Contains(sealed, "service-role-secret") {
		t.Fatalf("sealed %q, %v", sealed, err)
	}
	if again, _ := s.Seal("service-role-secret", "c1/service_role_key"); again == sealed {
		t.Fatal("two seals of one value are equal: the nonce is not random")
	}
	// The same key reopens it; another binding or key does not.
	s2, err := OpenSealer(dir)
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := s2.Open(sealed, "c1/service_role_key"); err != nil || plain != "service-role-secret" {
		t.Fatalf("open: %q %v", plain, err)
	}
	if _, err := s2.Open(sealed, "c2/service_role_key"); err == nil {
		t.Fatal("a value sealed for one connector opened for another")
	}
	other, _ := OpenSealer(t.TempDir())
	if _, err := other.Open(sealed, "c1/service_role_key"); err == nil {
		t.Fatal("a value opened with another key")
	}
	for _, bad := range []string{"", "sealed:v1:", "sealed:v1:!!!", "plain text"} {
		if _, err := s.Open(bad, "c1/x"); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
}

func TestMergePatch(t *testing.T) {
	t.Parallel()
	// The examples of RFC 7386 appendix A.
	cases := []struct{ target, patch, want any }{
		{map[string]any{"a": "b"}, map[string]any{"a": "c"}, map[string]any{"a": "c"}},
		{map[string]any{"a": "b"}, map[string]any{"b": "c"}, map[string]any{"a": "b", "b": "c"}},
		{map[string]any{"a": "b"}, map[string]any{"a": nil}, map[string]any{}},
		{map[string]any{"a": "b", "b": "c"}, map[string]any{"a": nil}, map[string]any{"b": "c"}},
		{map[string]any{"a": []any{"b"}}, map[string]any{"a": "c"}, map[string]any{"a": "c"}},
		{map[string]any{"a": "c"}, map[string]any{"a": []any{"b"}}, map[string]any{"a": []any{"b"}}},
		{map[string]any{"a": map[string]any{"b": "c"}}, map[string]any{"a": map[string]any{"b": "d", "c": nil}}, map[string]any{"a": map[string]any{"b": "d"}}},
		{map[string]any{"a": []any{map[string]any{"b": "c"}}}, map[string]any{"a": []any{1.0}}, map[string]any{"a": []any{1.0}}},
		{[]any{"a", "b"}, []any{"c", "d"}, []any{"c", "d"}},
		{map[string]any{"a": "b"}, []any{"c"}, []any{"c"}},
		{map[string]any{"a": "foo"}, nil, nil},
		{map[string]any{"e": nil}, map[string]any{"a": 1.0}, map[string]any{"e": nil, "a": 1.0}},
		{[]any{1.0, 2.0}, map[string]any{"a": "b", "c": nil}, map[string]any{"a": "b"}},
		{map[string]any{}, map[string]any{"a": map[string]any{"bb": map[string]any{"ccc": nil}}}, map[string]any{"a": map[string]any{"bb": map[string]any{}}}},
	}
	for i, c := range cases {
		if got := mergePatch(c.target, c.patch); !reflect.DeepEqual(got, c.want) {
			t.Errorf("case %d: got %#v, want %#v", i, got, c.want)
		}
	}
	// The target is not modified in place.
	target := map[string]any{"a": "b"}
	mergePatch(target, map[string]any{"a": nil})
	if target["a"] != "b" {
		t.Fatal("mergePatch changed its target")
	}
}
