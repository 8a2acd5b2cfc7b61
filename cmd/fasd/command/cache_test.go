package command

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/storage"
)

// Ensure that the --cache size reaches the storage options of a command's
// context, and that without it the options are left alone (the store's
// default).
func TestWithCacheOf(t *testing.T) {
	o := &storage.Options{MustExist: true}
	if got := withCacheOf(context.Background(), o); got != o {
		t.Errorf("no --cache: options changed to %+v", got)
	}
	ctx := withCache(context.Background(), 3<<20)
	got := withCacheOf(ctx, o)
	if got.CacheBytes != 3<<20 || !got.MustExist || o.CacheBytes != 0 {
		t.Errorf("--cache 3MiB: got %+v (input now %+v)", got, o)
	}
	if got := withCacheOf(ctx, nil); got == nil || got.CacheBytes != 3<<20 {
		t.Errorf("--cache 3MiB on nil options: got %+v", got)
	}
}

// Ensure that --cache is accepted before and after the command name and
// that a size that is not one is a usage error naming the flag.
func TestCacheFlag(t *testing.T) {
	dir := t.TempDir()
	if _, err, _ := run(t, "gen", "--out", dir, "--nodes", "120", "--features", "3"); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "db")
	if _, err, _ := run(t, "--cache", "8MiB", "load", "--db", db, "--preset", "synth", "--dir", dir); err != nil {
		t.Fatal(err)
	}
	if _, err, _ := run(t, "stats", "--db", db, "--cache", "1MiB"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"-1", "lots"} {
		_, err, code := run(t, "stats", "--db", db, "--cache", bad)
		if code != ExitUsage || err == nil || !strings.Contains(err.Error(), "--cache") {
			t.Errorf("--cache %s: exit %d (%v), want a usage error naming --cache", bad, code, err)
		}
	}
}
