package storage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// MarkerFile is the name of the text file that identifies a fasd store
// directory (see the package doc).
const MarkerFile = "FASD-STORE"

var (
	keyBackend = []byte("\x00storage/backend")
	keyFormat  = []byte("\x00storage/format")
)

// ReservedPrefix is the first byte of every key the storage layer keeps for
// itself. Layers above must not write keys that start with it.
const ReservedPrefix = 0x00

// Open opens the store in dir, creating it (and dir) if needed.
//
// The backend is taken from opts, else from the store's marker, else Pebble.
// A failed Open leaves nothing open. The backend's engine must be linked
// into the program (see Register), else Open fails with ErrNotLinked
// before it touches dir.
//
// A dir that is a DSN (see IsDSN) names a store on a database server
// instead of a directory: the Postgres backend, which must then be the
// backend opts name, if any. It has no marker file; the metadata keys
// alone record backend and format.
func Open(dir string, opts *Options) (_ Store, err error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if IsDSN(dir) && (opts == nil || !opts.InMemory) {
		return openDSN(dir, opts)
	}
	if opts != nil && opts.InMemory {
		o := opts.withDefaults("")
		open, err := engine(o.Backend)
		if err != nil {
			return nil, err
		}
		s, err := open("", o)
		if err != nil {
			return nil, err
		}
		if err := initMeta(s, o.Backend); err != nil {
			return nil, errors.Join(err, s.Close())
		}
		return s, nil
	}
	if dir == "" {
		return nil, errors.New("storage: open: empty directory name")
	}
	if opts != nil && opts.Backend == Postgres {
		return nil, fmt.Errorf("storage: the %s backend opens a postgres:// DSN, not the directory %s", Postgres, dir)
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is a file, not a store directory", ErrNotStore, dir)
	}
	recorded, fresh, err := readMarker(dir)
	if err != nil {
		return nil, err
	}
	readOnly := opts != nil && opts.ReadOnly
	if opts != nil && opts.Shared {
		return nil, fmt.Errorf("storage: Shared needs a store on a server (a %s DSN), not the directory %s", Postgres, dir)
	}
	if fresh && (readOnly || opts != nil && opts.MustExist) {
		if _, serr := os.Stat(dir); serr != nil {
			return nil, fmt.Errorf("%w: %s does not exist: %w", ErrNotStore, dir, serr)
		}
		return nil, fmt.Errorf("%w: %s is an empty directory", ErrNotStore, dir)
	}
	o := opts.withDefaults(recorded)
	if o.Backend == Postgres {
		return nil, fmt.Errorf("%w: %s names the %s backend, which opens a postgres:// DSN, not a directory", ErrFormat, filepath.Join(dir, MarkerFile), Postgres)
	}
	if recorded != "" && o.Backend != recorded {
		return nil, fmt.Errorf("%w: %s holds a %s store, asked to open it with %s", ErrBackendMismatch, dir, recorded, o.Backend)
	}
	open, err := engine(o.Backend)
	if err != nil {
		return nil, err
	}
	if fresh {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("storage: create %s: %w", dir, err)
		}
		if err := writeMarker(dir, o.Backend); err != nil {
			return nil, err
		}
	}
	s, err := open(dir, o)
	if isLockErr(err) {
		return nil, fmt.Errorf("%w: %s is already open (by another process or handle: its lock is held); close it or use another directory: %w", ErrLocked, dir, err)
	}
	if !fresh && errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrNotStore) {
		// A file the engine's own records name is missing.
		return nil, fmt.Errorf("%w: open %s store in %s: %w", ErrCorrupt, o.Backend, dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("storage: open %s store in %s: %w", o.Backend, dir, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Close())
		}
	}()
	if readOnly {
		err = checkMeta(s, o.Backend)
	} else {
		err = initMeta(s, o.Backend)
	}
	if err != nil {
		return nil, fmt.Errorf("storage: %s: %w", dir, err)
	}
	return s, nil
}

// IsDSN reports whether a store location is a PostgreSQL connection URL
// (postgres:// or postgresql://) rather than a directory.
func IsDSN(location string) bool {
	return strings.HasPrefix(location, "postgres://") || strings.HasPrefix(location, "postgresql://")
}

// openDSN opens the store a DSN names.
func openDSN(dsn string, opts *Options) (_ Store, err error) {
	o := opts.withDefaults(Postgres)
	if o.Backend != Postgres {
		return nil, fmt.Errorf("%w: a DSN names a %s store, asked to open it with %s", ErrBackendMismatch, Postgres, o.Backend)
	}
	open, err := engine(Postgres)
	if err != nil {
		return nil, err
	}
	s, err := open(dsn, o)
	if err != nil {
		// The engine wraps ErrLocked itself; its errors never repeat the
		// DSN, which may hold a password.
		return nil, fmt.Errorf("storage: open %s store: %w", Postgres, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Close())
		}
	}()
	meta := initMeta
	if o.Shared {
		meta = checkMeta
	}
	if err := meta(s, Postgres); err != nil {
		return nil, fmt.Errorf("storage: %s store: %w", Postgres, err)
	}
	return s, nil
}

// OpenFunc opens the engine of one backend in dir (or in memory when
// o.InMemory is set, or on the server a DSN names for Postgres) with o's
// defaults applied. Open has written or checked the marker file before
// (directories only) and records the metadata keys after. An engine that
// finds the store held by another writer returns an error wrapping
// ErrLocked.
type OpenFunc func(dir string, o Options) (Store, error)

var (
	enginesMu sync.RWMutex
	engines   = map[Backend]OpenFunc{}
)

// Register makes a backend's engine available to Open. The backend
// packages call it from their init functions, so a program links an
// engine by importing its package, usually for that side effect alone:
//
//	import _ "github.com/fasd-db/fasd/storage/pebble"
//
// Registering a name twice, or a name ParseBackend does not know, panics.
func Register(b Backend, open OpenFunc) {
	if _, err := ParseBackend(string(b)); err != nil || b == "" {
		panic(fmt.Sprintf("storage: Register of unknown backend %q", b))
	}
	enginesMu.Lock()
	defer enginesMu.Unlock()
	if _, dup := engines[b]; dup {
		panic(fmt.Sprintf("storage: Register called twice for %s", b))
	}
	engines[b] = open
}

// Registered lists the backends whose engines are linked into the
// program, sorted.
func Registered() []Backend {
	enginesMu.RLock()
	defer enginesMu.RUnlock()
	out := make([]Backend, 0, len(engines))
	for b := range engines {
		out = append(out, b)
	}
	slices.Sort(out)
	return out
}

// engine returns the registered engine of b.
func engine(b Backend) (OpenFunc, error) {
	enginesMu.RLock()
	open := engines[b]
	enginesMu.RUnlock()
	if open == nil {
		return nil, fmt.Errorf("%w: %s (import _ \"github.com/fasd-db/fasd/storage/%s\" to link it)", ErrNotLinked, b, b)
	}
	return open, nil
}

// initMeta records backend and format in a new store, or checks them in an
// existing one.
func initMeta(s Store, b Backend) error {
	_, err := s.Get(keyBackend)
	if errors.Is(err, ErrNotFound) {
		batch := s.NewBatch()
		defer batch.Close()
		if err := batch.Set(keyBackend, []byte(b)); err != nil {
			return err
		}
		if err := batch.Set(keyFormat, []byte(strconv.Itoa(FormatVersion))); err != nil {
			return err
		}
		return batch.Commit()
	}
	return checkMeta(s, b)
}

// checkMeta checks the backend and format records of an existing store.
func checkMeta(s Store, b Backend) error {
	got, err := s.Get(keyBackend)
	switch {
	case errors.Is(err, ErrNotFound):
		return fmt.Errorf("%w: no backend record (a store whose creation did not finish)", ErrNotStore)
	case err != nil:
		return fmt.Errorf("read backend record: %w", err)
	}
	if Backend(got) != b {
		return fmt.Errorf("%w: store records backend %q, opened with %s", ErrBackendMismatch, got, b)
	}
	f, err := s.Get(keyFormat)
	if err != nil {
		return fmt.Errorf("read format record: %w", err)
	}
	if v, err := strconv.Atoi(string(f)); err != nil || v != FormatVersion {
		return fmt.Errorf("%w: store records format %q, this build reads %d", ErrFormat, f, FormatVersion)
	}
	return nil
}

// readMarker returns the backend recorded in dir's marker. fresh reports a
// missing or empty directory, where a new store may be created.
func readMarker(dir string) (b Backend, fresh bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, MarkerFile))
	if errors.Is(err, fs.ErrNotExist) {
		entries, derr := os.ReadDir(dir)
		if errors.Is(derr, fs.ErrNotExist) || (derr == nil && len(entries) == 0) {
			return "", true, nil
		}
		if derr != nil {
			return "", false, fmt.Errorf("storage: read %s: %w", dir, derr)
		}
		return "", false, fmt.Errorf("%w: %s is not empty and has no %s file", ErrNotStore, dir, MarkerFile)
	}
	if err != nil {
		return "", false, fmt.Errorf("storage: read marker: %w", err)
	}
	b, err = parseMarker(data)
	if err != nil {
		return "", false, fmt.Errorf("storage: %s: %w", filepath.Join(dir, MarkerFile), err)
	}
	return b, false, nil
}

func parseMarker(data []byte) (Backend, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	var b Backend
	format := -1
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if line == 1 {
			if text != "fasd-store" {
				return "", fmt.Errorf("%w: first line is %q, want \"fasd-store\"", ErrNotStore, text)
			}
			continue
		}
		k, v, ok := strings.Cut(text, "=")
		if !ok {
			continue
		}
		switch k {
		case "backend":
			pb, err := ParseBackend(v)
			if err != nil || pb == "" {
				return "", fmt.Errorf("%w: line %d: unknown backend %q", ErrFormat, line, v)
			}
			b = pb
		case "format":
			n, err := strconv.Atoi(v)
			if err != nil {
				return "", fmt.Errorf("%w: line %d: format %q is not a number", ErrFormat, line, v)
			}
			format = n
		}
	}
	if b == "" {
		return "", fmt.Errorf("%w: no backend line", ErrFormat)
	}
	if format != FormatVersion {
		return "", fmt.Errorf("%w: format %d, this build reads %d", ErrFormat, format, FormatVersion)
	}
	return b, nil
}

// markerText is the content of the marker file of a store of backend b.
func markerText(b Backend) string {
	return fmt.Sprintf("fasd-store\nbackend=%s\nformat=%d\n", b, FormatVersion)
}

func writeMarker(dir string, b Backend) error {
	text := markerText(b)
	tmp := filepath.Join(dir, MarkerFile+".tmp")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return fmt.Errorf("storage: write marker: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, MarkerFile)); err != nil {
		return fmt.Errorf("storage: write marker: %w", err)
	}
	return nil
}

// isLockErr reports whether an engine's open error means that the
// directory's lock is held: both engines take an exclusive file lock, and
// report a conflict as EAGAIN from flock (another process), Pebble as "lock
// held by current process" (same process) and Badger in a formatted message
// that does not wrap the errno.
func isLockErr(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) {
		return true
	}
	m := err.Error()
	return strings.Contains(m, "lock held by current process") || strings.Contains(m, "Cannot acquire directory lock") ||
		strings.Contains(m, syscall.EAGAIN.Error())
}
