// Package store puts objects into storage: the local file system now,
// S3-compatible object stores later, behind one small interface.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrNotExist is returned (wrapped) for a key that has no object.
var ErrNotExist = errors.New("object does not exist")

// ErrPreconditionFailed is returned (wrapped) by a conditional put whose
// condition does not hold.
var ErrPreconditionFailed = errors.New("precondition failed")

// ErrOutcomeUnknown is returned (wrapped) by a conditional put that was
// retried after an attempt whose outcome is unknown (a lost response, a
// server error) and then found its condition false: the first attempt may
// have written the object. Read it to know.
var ErrOutcomeUnknown = errors.New("conditional write's outcome unknown")

// ValidateKey rejects keys that could escape the store's root or that
// object stores and file systems disagree about.
func ValidateKey(key string) error {
	if key == "" {
		return errors.New("empty object key")
	}
	if strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") {
		return fmt.Errorf("object key %q must not start or end with /", key)
	}
	for _, part := range strings.Split(key, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("object key %q has an empty, . or .. segment", key)
		}
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] == 0x7f || key[i] == '\\' {
			return fmt.Errorf("object key %q has a control character or backslash", key)
		}
	}
	return nil
}

// Store is the interface every implementation provides.
type Store interface {
	// Put writes data under key atomically: readers see the whole object
	// or none.
	Put(ctx context.Context, key string, data []byte) error
	// Get reads an object; a missing key yields an error wrapping
	// ErrNotExist.
	Get(ctx context.Context, key string) ([]byte, error)
	// List returns the keys under prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
	// Delete removes key; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// String names the store for logs, without credentials.
	String() string
}
