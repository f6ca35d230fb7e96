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
)

// Local stores objects as files under a root folder. A put writes a
// temporary file in the destination folder, syncs it, renames it into
// place and syncs the folder, so a crash never leaves a partial file
// under its final name.
type Local struct {
	root string
	dirs sync.Map // folders known to exist: saves a mkdir per file
}

// tmpPrefix marks files being written; List never returns them.
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
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("local store: cannot create %s: %w (check the sink path and its permissions)", abs, err)
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
	p, err := l.path(key)
	if err != nil {
		return err
	}
	tmp, err := l.writeTemp(filepath.Dir(p), data)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("put %s: %w", key, err)
	}
	return syncDir(filepath.Dir(p))
}

// writeTemp writes data to a new synced temporary file in dir (created if
// needed) and returns its path.
func (l *Local) writeTemp(dir string, data []byte) (string, error) {
	if _, known := l.dirs.Load(dir); !known {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
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
		return "", err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
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
	err := filepath.WalkDir(l.root, func(p string, d fs.DirEntry, err error) error {
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

// PutIfAbsent writes key only if it does not exist yet; an existing key
// yields an error wrapping ErrPreconditionFailed. Creation is atomic: the
// data is written to a temporary file and hard-linked into place, which
// fails if the name exists.
func (l *Local) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	tmp, err := l.writeTemp(filepath.Dir(p), data)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("put %s: %w", key, ErrPreconditionFailed)
		}
		return fmt.Errorf("put %s: %w", key, err)
	}
	return syncDir(filepath.Dir(p))
}

// ETag returns a content hash of key, for PutIfMatch.
func (l *Local) ETag(ctx context.Context, key string) (string, error) {
	data, err := l.Get(ctx, key)
	if err != nil {
		return "", err
	}
	sum := md5.Sum(data)
	return `"` + hex.EncodeToString(sum[:]) + `"`, nil
}

// PutIfMatch replaces key only if its content still has etag. Unlike S3,
// the check and the rename are not one atomic step across processes; it
// guards against a stale writer, not against a simultaneous one.
func (l *Local) PutIfMatch(ctx context.Context, key string, data []byte, etag string) error {
	cur, err := l.ETag(ctx, key)
	if err != nil {
		return err
	}
	if cur != etag {
		return fmt.Errorf("put %s: etag %s, expected %s: %w", key, cur, etag, ErrPreconditionFailed)
	}
	return l.Put(ctx, key, data)
}
