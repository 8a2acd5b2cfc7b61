package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"

	"github.com/fasd-db/fasd/storage"
)

// Opener opens a fresh, empty store for one subtest. The suite closes it.
type Opener func(t *testing.T) storage.Store

// Run runs every conformance check as a subtest against stores made by open.
func Run(t *testing.T, open Opener) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s storage.Store)
	}{
		{"GetMissing", testGetMissing},
		{"SetGet", testSetGet},
		{"GetReturnsCopy", testGetReturnsCopy},
		{"BatchAtomic", testBatchAtomic},
		{"BatchCopiesInput", testBatchCopiesInput},
		{"BatchDone", testBatchDone},
		{"Delete", testDelete},
		{"IterBounds", testIterBounds},
		{"IterSeekGE", testIterSeekGE},
		{"SnapshotIsolation", testSnapshotIsolation},
		{"ConcurrentReaders", testConcurrentReaders},
		{"ManyKeys", testManyKeys},
		{"OracleRandomOps", testOracle},
		{"GetMany", testGetMany},
		{"CommitIf", testCommitIf},
		{"IterPages", testIterPages},
		{"CloseIdempotent", testClose},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			defer func() {
				if err := s.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
			}()
			tc.fn(t, s)
		})
	}
}

func put(t *testing.T, s storage.Store, kv ...string) {
	t.Helper()
	b := s.NewBatch()
	defer b.Close()
	for i := 0; i+1 < len(kv); i += 2 {
		if err := b.Set([]byte(kv[i]), []byte(kv[i+1])); err != nil {
			t.Fatalf("set %q: %v", kv[i], err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

func mustGet(t *testing.T, r storage.Reader, key string) string {
	t.Helper()
	v, err := r.Get([]byte(key))
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	return string(v)
}

func wantMissing(t *testing.T, r storage.Reader, key string) {
	t.Helper()
	v, err := r.Get([]byte(key))
	if !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("get %q: got (%q, %v), want ErrNotFound", key, v, err)
	}
}

// scan returns all key/value pairs in [lower, upper) as "k=v" strings.
func scan(t *testing.T, r storage.Reader, lower, upper []byte) []string {
	t.Helper()
	it, err := r.NewIter(lower, upper)
	if err != nil {
		t.Fatalf("new iter: %v", err)
	}
	defer it.Close()
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.Value()
		if err != nil {
			t.Fatalf("value: %v", err)
		}
		out = append(out, string(it.Key())+"="+string(v))
	}
	if err := it.Err(); err != nil {
		t.Fatalf("iter: %v", err)
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Ensure that Get of an absent key reports ErrNotFound.
func testGetMissing(t *testing.T, s storage.Store) {
	wantMissing(t, s, "nope")
}

// Ensure that committed values read back exactly, including empty and
// binary ones.
func testSetGet(t *testing.T, s storage.Store) {
	put(t, s, "a", "1", "empty", "", "bin\xff\x00", "\x00\xff\x01")
	for _, tc := range []struct{ k, v string }{{"a", "1"}, {"empty", ""}, {"bin\xff\x00", "\x00\xff\x01"}} {
		if got := mustGet(t, s, tc.k); got != tc.v {
			t.Errorf("get %q = %q, want %q", tc.k, got, tc.v)
		}
	}
	put(t, s, "a", "2")
	if got := mustGet(t, s, "a"); got != "2" {
		t.Errorf("overwrite: got %q, want 2", got)
	}
}

// Ensure that the slice Get returns is owned by the caller.
func testGetReturnsCopy(t *testing.T, s storage.Store) {
	put(t, s, "k", "value")
	v, err := s.Get([]byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	copy(v, "XXXXX")
	if got := mustGet(t, s, "k"); got != "value" {
		t.Fatalf("mutating a returned value changed the store: %q", got)
	}
}

// Ensure that a batch is invisible before Commit, fully visible after, and
// that Close without Commit discards it.
func testBatchAtomic(t *testing.T, s storage.Store) {
	b := s.NewBatch()
	for i := 0; i < 100; i++ {
		if err := b.Set([]byte(fmt.Sprintf("k%03d", i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if b.Count() != 100 {
		t.Errorf("Count = %d, want 100", b.Count())
	}
	if b.Len() <= 0 {
		t.Errorf("Len = %d, want > 0", b.Len())
	}
	wantMissing(t, s, "k000")
	if got := scan(t, s, []byte("k"), []byte("l")); len(got) != 0 {
		t.Fatalf("uncommitted batch visible to iteration: %v", got)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := scan(t, s, []byte("k"), []byte("l")); len(got) != 100 {
		t.Fatalf("after commit %d keys, want 100", len(got))
	}
	d := s.NewBatch()
	if err := d.Set([]byte("discarded"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete([]byte("k000")); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	wantMissing(t, s, "discarded")
	mustGet(t, s, "k000")
}

// Ensure that the caller may reuse key and value buffers after Set.
func testBatchCopiesInput(t *testing.T, s storage.Store) {
	b := s.NewBatch()
	defer b.Close()
	k := []byte("key1")
	v := []byte("val1")
	if err := b.Set(k, v); err != nil {
		t.Fatal(err)
	}
	copy(k, "key2")
	copy(v, "val2")
	if err := b.Set(k, v); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := scan(t, s, nil, nil); !equal(filterUser(got), []string{"key1=val1", "key2=val2"}) {
		t.Fatalf("got %v", got)
	}
}

// filterUser drops the keys the storage layer reserves for itself.
func filterUser(kvs []string) []string {
	var out []string
	for _, kv := range kvs {
		if len(kv) > 0 && kv[0] == storage.ReservedPrefix {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Ensure that a committed or closed batch refuses further use and that a
// second Close is harmless.
func testBatchDone(t *testing.T, s storage.Store) {
	b := s.NewBatch()
	if err := b.Set([]byte("a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := b.Set([]byte("b"), []byte("2")); !errors.Is(err, storage.ErrBatchDone) {
		t.Errorf("Set after Commit: %v, want ErrBatchDone", err)
	}
	if err := b.Commit(); !errors.Is(err, storage.ErrBatchDone) {
		t.Errorf("second Commit: %v, want ErrBatchDone", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close after Commit: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Ensure that Delete removes keys and that deleting an absent key is fine.
func testDelete(t *testing.T, s storage.Store) {
	put(t, s, "a", "1", "b", "2")
	b := s.NewBatch()
	defer b.Close()
	if err := b.Delete([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete([]byte("never-there")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	wantMissing(t, s, "a")
	if got := mustGet(t, s, "b"); got != "2" {
		t.Fatalf("b = %q", got)
	}
}

// Ensure that iteration is ascending and honours [lower, upper), nil bounds
// and prefix ends.
func testIterBounds(t *testing.T, s storage.Store) {
	put(t, s, "p/a", "1", "p/b", "2", "p/c", "3", "q", "4", "p", "0", "p\xff", "5")
	tests := []struct {
		name         string
		lower, upper []byte
		want         []string
	}{
		{"prefix", []byte("p/"), storage.PrefixEnd([]byte("p/")), []string{"p/a=1", "p/b=2", "p/c=3"}},
		{"half-open", []byte("p/a"), []byte("p/c"), []string{"p/a=1", "p/b=2"}},
		{"empty", []byte("p/x"), []byte("p/y"), nil},
		{"no-upper", []byte("p\xff"), nil, []string{"p\xff=5", "q=4"}},
		{"prefix-p", []byte("p"), storage.PrefixEnd([]byte("p")), []string{"p=0", "p/a=1", "p/b=2", "p/c=3", "p\xff=5"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := scan(t, s, tc.lower, tc.upper); !equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	if got := filterUser(scan(t, s, nil, nil)); len(got) != 6 {
		t.Fatalf("full scan: %q", got)
	}
}

// Ensure that SeekGE positions on the first key ≥ target inside the bounds.
func testIterSeekGE(t *testing.T, s storage.Store) {
	put(t, s, "k1", "a", "k3", "b", "k5", "c", "z", "d")
	it, err := s.NewIter([]byte("k"), []byte("l"))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	tests := []struct {
		seek string
		want string // "" = exhausted
	}{{"k0", "k1"}, {"k2", "k3"}, {"k3", "k3"}, {"k6", ""}, {"a", "k1"}}
	for _, tc := range tests {
		ok := it.SeekGE([]byte(tc.seek))
		if tc.want == "" {
			if ok || it.Valid() {
				t.Errorf("SeekGE(%q) positioned on %q, want exhausted", tc.seek, it.Key())
			}
			continue
		}
		if !ok || string(it.Key()) != tc.want {
			t.Errorf("SeekGE(%q) = %v %q, want %q", tc.seek, ok, keyOf(it), tc.want)
		}
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if err := it.Close(); err != nil {
		t.Fatalf("second iterator Close: %v", err)
	}
}

func keyOf(it storage.Iterator) string {
	if !it.Valid() {
		return ""
	}
	return string(it.Key())
}

// Ensure that a snapshot sees neither later writes nor later deletes.
func testSnapshotIsolation(t *testing.T, s storage.Store) {
	put(t, s, "a", "old", "b", "keep")
	snap, err := s.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	put(t, s, "a", "new", "c", "added")
	b := s.NewBatch()
	if err := b.Delete([]byte("b")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, snap, "a"); got != "old" {
		t.Errorf("snapshot a = %q, want old", got)
	}
	wantMissing(t, snap, "c")
	if got := mustGet(t, snap, "b"); got != "keep" {
		t.Errorf("snapshot b = %q", got)
	}
	if got := filterUser(scan(t, snap, nil, nil)); !equal(got, []string{"a=old", "b=keep"}) {
		t.Errorf("snapshot scan = %q", got)
	}
	if got := filterUser(scan(t, s, nil, nil)); !equal(got, []string{"a=new", "c=added"}) {
		t.Errorf("store scan = %q", got)
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	if err := snap.Close(); err != nil {
		t.Fatalf("second snapshot Close: %v", err)
	}
}

// Ensure that readers running while batches commit always see whole
// batches: every batch writes the same generation to two keys.
func testConcurrentReaders(t *testing.T, s storage.Store) {
	put(t, s, "x", "0000", "y", "0000")
	const writes = 200
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < writes; i++ {
				snap, err := s.NewSnapshot()
				if err != nil {
					errc <- err
					return
				}
				x, err1 := snap.Get([]byte("x"))
				y, err2 := snap.Get([]byte("y"))
				snap.Close()
				if err := errors.Join(err1, err2); err != nil {
					errc <- err
					return
				}
				if !bytes.Equal(x, y) {
					errc <- fmt.Errorf("torn read: x=%s y=%s", x, y)
					return
				}
			}
		}()
	}
	for i := 1; i <= writes; i++ {
		g := fmt.Sprintf("%04d", i)
		b := s.NewBatch()
		if err := errors.Join(b.Set([]byte("x"), []byte(g)), b.Set([]byte("y"), []byte(g)), b.Commit()); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}

// Ensure that a few thousand keys written in several batches iterate back in
// order and complete.
func testManyKeys(t *testing.T, s storage.Store) {
	const n = 5000
	b := s.NewBatch()
	for i := 0; i < n; i++ {
		if b.Len() > 64<<10 {
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			b = s.NewBatch()
		}
		if err := b.Set([]byte(fmt.Sprintf("n/%08d", i)), bytes.Repeat([]byte{byte(i)}, 16)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	got := scan(t, s, []byte("n/"), storage.PrefixEnd([]byte("n/")))
	if len(got) != n {
		t.Fatalf("scanned %d keys, want %d", len(got), n)
	}
	if !sort.StringsAreSorted(got) {
		t.Fatal("iteration not in ascending order")
	}
}

// Ensure that random batches of sets and deletes leave the store equal to a
// map oracle, for point reads and for full scans.
func testOracle(t *testing.T, s storage.Store) {
	rng := rand.New(rand.NewPCG(1, 2))
	oracle := map[string]string{}
	for round := 0; round < 50; round++ {
		b := s.NewBatch()
		pending := map[string]*string{}
		for op := rng.IntN(20); op >= 0; op-- {
			k := fmt.Sprintf("o/%02d", rng.IntN(40))
			if rng.IntN(3) == 0 {
				if err := b.Delete([]byte(k)); err != nil {
					t.Fatal(err)
				}
				pending[k] = nil
			} else {
				v := fmt.Sprintf("v%d", rng.IntN(1000))
				if err := b.Set([]byte(k), []byte(v)); err != nil {
					t.Fatal(err)
				}
				pending[k] = &v
			}
		}
		if rng.IntN(5) == 0 {
			b.Close() // discarded: oracle unchanged
			continue
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		for k, v := range pending {
			if v == nil {
				delete(oracle, k)
			} else {
				oracle[k] = *v
			}
		}
	}
	var want []string
	for k, v := range oracle {
		want = append(want, k+"="+v)
		if got := mustGet(t, s, k); got != v {
			t.Errorf("get %q = %q, want %q", k, got, v)
		}
	}
	sort.Strings(want)
	if got := scan(t, s, []byte("o/"), []byte("o0")); !equal(got, want) {
		t.Fatalf("scan:\n got %q\nwant %q", got, want)
	}
}

// Ensure that Close is idempotent and that a closed store refuses work.
func testClose(t *testing.T, s storage.Store) {
	put(t, s, "a", "1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Get([]byte("a")); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Get after Close: %v, want ErrClosed", err)
	}
	if _, err := s.NewIter(nil, nil); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("NewIter after Close: %v, want ErrClosed", err)
	}
	if _, err := s.NewSnapshot(); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("NewSnapshot after Close: %v, want ErrClosed", err)
	}
	b := s.NewBatch()
	if err := b.Commit(); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Commit after Close: %v, want ErrClosed", err)
	}
}

// Ensure that storage.GetMany (the store's own multi-get, or the loop of
// Get) returns values in the order of the keys, nil for absent keys and a
// non-nil empty slice for an empty value, on the store and on a snapshot.
func testGetMany(t *testing.T, s storage.Store) {
	put(t, s, "a", "1", "b", "", "c", "3")
	snap, err := s.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	put(t, s, "a", "new", "d", "4")
	keys := [][]byte{[]byte("c"), []byte("zz"), []byte("a"), []byte("b"), []byte("a"), []byte("d")}
	for _, tc := range []struct {
		name string
		r    storage.Reader
		want []string // "<nil>" = absent
	}{
		{"store", s, []string{"3", "<nil>", "new", "", "new", "4"}},
		{"snapshot", snap, []string{"3", "<nil>", "1", "", "1", "<nil>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals, err := storage.GetMany(tc.r, keys)
			if err != nil {
				t.Fatal(err)
			}
			if len(vals) != len(keys) {
				t.Fatalf("%d values for %d keys", len(vals), len(keys))
			}
			for i, v := range vals {
				got := string(v)
				if v == nil {
					got = "<nil>"
				}
				if got != tc.want[i] {
					t.Errorf("key %q: got %q, want %q", keys[i], got, tc.want[i])
				}
			}
			if len(vals) > 4 && len(vals[2]) > 0 {
				vals[2][0] = 'X' // the values are the caller's: a repeat must not alias
				if vals[4][0] == 'X' {
					t.Error("values of a repeated key share memory")
				}
			}
		})
	}
	if vals, err := storage.GetMany(s, nil); err != nil || len(vals) != 0 {
		t.Errorf("no keys: %v, %v", vals, err)
	}
}

// Ensure that iteration over more keys than an engine reads at once (the
// Postgres engine reads pages of a few thousand rows) stays ordered and
// complete, that SeekGE works forwards and backwards across pages, and that
// an iterator on the store reads one state while batches commit.
func testIterPages(t *testing.T, s storage.Store) {
	const n = 20000
	b := s.NewBatch()
	for i := 0; i < n; i++ {
		if err := b.Set([]byte(fmt.Sprintf("p/%06d", i)), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	it, err := s.NewIter([]byte("p/"), []byte("p0"))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if want := fmt.Sprintf("p/%06d", i); string(it.Key()) != want {
			t.Fatalf("key %d = %q, want %q", i, it.Key(), want)
		}
		if i == 10 {
			// A write after the iterator's first key: not seen.
			put(t, s, "p/999999", "late")
			d := s.NewBatch()
			if err := errors.Join(d.Delete([]byte(fmt.Sprintf("p/%06d", n-1))), d.Commit()); err != nil {
				t.Fatal(err)
			}
		}
		i++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if i != n {
		t.Fatalf("iterated %d keys, want %d (the iterator saw later batches)", i, n)
	}
	for _, k := range []int{15000, 3, 19998, 7000, 0} {
		want := fmt.Sprintf("p/%06d", k)
		if !it.SeekGE([]byte(want)) || string(it.Key()) != want {
			t.Fatalf("SeekGE(%s): valid %v key %q", want, it.Valid(), keyOf(it))
		}
		if !it.Next() || string(it.Key()) != fmt.Sprintf("p/%06d", k+1) {
			t.Fatalf("Next after SeekGE(%s): %q", want, keyOf(it))
		}
	}
}
