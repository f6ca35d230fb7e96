package commit_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/lakehouse-exporter/lakehouse-exporter/commit"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

// memStore is an in-memory store with the conditional writes of the
// protocol; an ETag is the object's write number.
type memStore struct {
	mu   sync.Mutex
	objs map[string]memObject
	n    int
}

type memObject struct {
	data []byte
	etag string
}

func newMemStore() *memStore { return &memStore{objs: map[string]memObject{}} }

func (m *memStore) String() string { return "mem://" }

func (m *memStore) put(key string, data []byte) string {
	m.n++
	m.objs[key] = memObject{data: slices.Clone(data), etag: strconv.Itoa(m.n)}
	return m.objs[key].etag
}

func (m *memStore) Put(ctx context.Context, key string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.put(key, data)
	return nil
}

func (m *memStore) Get(ctx context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[key]
	if !ok {
		return nil, fmt.Errorf("get %s: %w", key, store.ErrNotExist)
	}
	return slices.Clone(o.data), nil
}

func (m *memStore) GetWithETag(ctx context.Context, key string) ([]byte, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[key]
	if !ok {
		return nil, "", fmt.Errorf("get %s: %w", key, store.ErrNotExist)
	}
	return slices.Clone(o.data), o.etag, nil
}

func (m *memStore) List(ctx context.Context, prefix string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var keys []string
	for k := range m.objs {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

func (m *memStore) Delete(ctx context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objs, key)
	return nil
}

func (m *memStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objs[key]; ok {
		return "", fmt.Errorf("put %s: %w", key, store.ErrPreconditionFailed)
	}
	return m.put(key, data), nil
}

func (m *memStore) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.objs[key]; !ok || o.etag != etag {
		return "", fmt.Errorf("put %s: %w", key, store.ErrPreconditionFailed)
	}
	return m.put(key, data), nil
}

func (m *memStore) ETag(ctx context.Context, key string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[key]
	if !ok {
		return "", fmt.Errorf("etag %s: %w", key, store.ErrNotExist)
	}
	return o.etag, nil
}

// errCrashed is what every write returns once the process "died".
var errCrashed = errors.New("crashed")

// crashStore passes reads through and lets the first `after` writes
// (Put, Delete, conditional puts, and the source's acknowledgement)
// happen; every later one fails, as if the process had been killed
// between two steps. after < 0 never crashes; writes counts them.
type crashStore struct {
	commit.Store
	mu     sync.Mutex
	after  int
	writes int
}

func (c *crashStore) write() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.after >= 0 && c.writes >= c.after {
		return errCrashed
	}
	c.writes++
	return nil
}

func (c *crashStore) Put(ctx context.Context, key string, data []byte) error {
	if err := c.write(); err != nil {
		return err
	}
	return c.Store.Put(ctx, key, data)
}

func (c *crashStore) Delete(ctx context.Context, key string) error {
	if err := c.write(); err != nil {
		return err
	}
	return c.Store.Delete(ctx, key)
}

func (c *crashStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	if err := c.write(); err != nil {
		return "", err
	}
	return c.Store.PutIfAbsent(ctx, key, data)
}

func (c *crashStore) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if err := c.write(); err != nil {
		return "", err
	}
	return c.Store.PutIfMatch(ctx, key, data, etag)
}
