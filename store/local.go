package store

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Local stores objects as files under a root folder. A put writes a
// temporary file in the destination folder, syncs it, renames it into
// place and syncs the folder, so a crash never leaves a partial file
// under its final name.
type Local struct {
	root string
	dirs sync.Map // folders known to exist: saves a mkdir per file
}

// tmpPrefix marks files being written; List never returns them, and
// RemoveStaleTemps removes those a crash left behind.
const tmpPrefix = ".tmp-"

// NewLocal returns a store rooted at dir, creating it if needed.
func NewLocal(dir string) (*Local, error) {
	if dir == "" {
		return nil, errors.New("local store: empty folder path")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("local store %q: %w", dir, err)
	}
	// The folder is made by the first write (every write makes its
	// folders), so that opening a sink to check it (validate, a run
	// refused for its flags) leaves nothing behind; a path that cannot
	// become a folder is refused now.
	for dir := abs; ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err == nil && !fi.IsDir() {
			// A PathError: the sink is well formed, this machine just
			// cannot use it (a runtime failure, not bad usage).
			return nil, fmt.Errorf("local store: cannot create %s: %w (check the sink path)", abs,
				&fs.PathError{Op: "stat", Path: dir, Err: errors.New("a file, not a folder")})
		}
		if err == nil || filepath.Dir(dir) == dir {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("local store: cannot create %s: %w (check the sink path and its permissions)", abs, err)
		}
	}
	return &Local{root: abs}, nil
}

func (l *Local) String() string { return "file://" + l.root }

// Root is the absolute folder of the store.
func (l *Local) Root() string { return l.root }

func (l *Local) path(key string) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	return filepath.Join(l.root, filepath.FromSlash(key)), nil
}

func (l *Local) Put(ctx context.Context, key string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.putVia(key, data, func(tmp, p string) error {
		if err := os.Rename(tmp, p); err != nil {
			os.Remove(tmp)
			return err
		}
		return nil
	})
}

// putVia writes data to a new synced, locked temporary file in key's
// folder, lets place move or link it to key's path, and syncs the folder.
// The lock is held until place returns, so RemoveStaleTemps never takes a
// file that is still being put.
func (l *Local) putVia(key string, data []byte, place func(tmp, path string) error) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	dir := filepath.Dir(p)
	tmp, err := l.writeTemp(dir, data)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	err = place(tmp.Name(), p)
	tmp.Close()
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return syncDir(dir)
}

// writeTemp writes data to a new synced temporary file in dir (created if
// needed) and returns it open and locked (see lockTemp).
func (l *Local) writeTemp(dir string, data []byte) (*os.File, error) {
	if _, known := l.dirs.Load(dir); !known {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		l.dirs.Store(dir, true)
	}
	tmp, err := os.CreateTemp(dir, tmpPrefix+"*")
	if errors.Is(err, fs.ErrNotExist) {
		// removed behind our back since we made it
		if err = os.MkdirAll(dir, 0o755); err == nil {
			tmp, err = os.CreateTemp(dir, tmpPrefix+"*")
		}
	}
	if err != nil {
		return nil, err
	}
	lockTemp(tmp)
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if err != nil {
		os.Remove(tmp.Name())
		tmp.Close()
		return nil, err
	}
	return tmp, nil
}

// staleTempAge is how old a temporary file must be before RemoveStaleTemps
// considers it: far longer than the instant between creating a temporary
// file and locking it.
const staleTempAge = time.Minute

// RemoveStaleTemps removes the temporary files that puts interrupted by a
// crash (kill -9, power loss) left behind, and returns how many. The rule:
// a ".tmp-*" file is removed when it is older than a minute and no process
// holds its lock. Every put holds an exclusive lock (flock) on its
// temporary file from just after creating it until the file is renamed or
// removed, and the kernel drops a lock when its process dies, so the
// files of a running instance (this one or another on the same folder)
// are never taken. Where locks are not available (non-Unix systems, file
// systems without flock) nothing is removed.
func (l *Local) RemoveStaleTemps(ctx context.Context) (int, error) {
	removed := 0
	cutoff := time.Now().Add(-staleTempAge)
	err := filepath.WalkDir(l.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while we walk
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || !strings.HasPrefix(d.Name(), tmpPrefix) {
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			return nil
		}
		if removeIfUnlocked(p) {
			removed++
		}
		return nil
	})
	if err != nil {
		return removed, fmt.Errorf("remove stale temporary files under %s: %w", l.root, err)
	}
	return removed, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}

func (l *Local) Get(ctx context.Context, key string) ([]byte, error) {
	p, err := l.path(key)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("get %s: %w", key, ErrNotExist)
	}
	return data, err
}

func (l *Local) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	// Walk only the folder the prefix names (its part up to the last
	// "/"): a walk of the whole sink per listing made listing one
	// partition's intents cost as much as the lake's thousands of files.
	start := l.root
	if i := strings.LastIndexByte(prefix, '/'); i > 0 {
		start = filepath.Join(l.root, filepath.FromSlash(prefix[:i]))
		if !strings.HasPrefix(start, l.root+string(filepath.Separator)) {
			start = l.root // a prefix with .. segments: filter the whole walk
		}
	}
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == start {
			return fs.SkipAll // nothing under the prefix
		}
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), tmpPrefix) {
			return nil
		}
		rel, err := filepath.Rel(l.root, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return nil
	})
	sort.Strings(keys)
	return keys, err
}

func (l *Local) Delete(ctx context.Context, key string) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// PutIfAbsent writes key only if it does not exist yet, and returns its
// ETag; an existing key yields an error wrapping ErrPreconditionFailed.
// Creation is atomic: the data is written to a temporary file and
// hard-linked into place, which fails if the name exists.
func (l *Local) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	err := l.putVia(key, data, func(tmp, p string) error {
		err := os.Link(tmp, p)
		os.Remove(tmp)
		if errors.Is(err, fs.ErrExist) {
			return ErrPreconditionFailed
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return etagOf(data), nil
}

// ETag returns a content hash of key, for PutIfMatch.
func (l *Local) ETag(ctx context.Context, key string) (string, error) {
	_, etag, err := l.GetWithETag(ctx, key)
	return etag, err
}

// GetWithETag reads key and the ETag of what it read.
func (l *Local) GetWithETag(ctx context.Context, key string) ([]byte, string, error) {
	data, err := l.Get(ctx, key)
	if err != nil {
		return nil, "", err
	}
	return data, etagOf(data), nil
}

func etagOf(data []byte) string {
	sum := md5.Sum(data)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// PutIfMatch replaces key only if its content still has etag, and returns
// its new ETag. Unlike S3, the check and the rename are not one atomic
// step across processes; it guards against a stale writer, not against a
// simultaneous one.
func (l *Local) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	cur, err := l.ETag(ctx, key)
	if err != nil {
		return "", err
	}
	if cur != etag {
		return "", fmt.Errorf("put %s: etag %s, expected %s: %w", key, cur, etag, ErrPreconditionFailed)
	}
	if err := l.Put(ctx, key, data); err != nil {
		return "", err
	}
	return etagOf(data), nil
}
