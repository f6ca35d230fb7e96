// Package store puts objects into storage behind one small interface: a
// local folder (Local) and S3-compatible object stores (S3: AWS S3, MinIO,
// Ceph...). Open builds either from a URL and a plain Config.
package store

import (
	"context"
	"errors"
	"fmt"
	"net"
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
	// PutIfAbsent writes key only if no object has it, and returns the new
	// object's ETag; an existing key yields an error wrapping
	// ErrPreconditionFailed.
	PutIfAbsent(ctx context.Context, key string, data []byte) (string, error)
	// PutIfMatch replaces key only if its current ETag is etag, and
	// returns the new object's ETag.
	PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error)
	// GetWithETag reads an object and the ETag of what it read, in one
	// step: an ETag read apart could be a later writer's.
	GetWithETag(ctx context.Context, key string) ([]byte, string, error)
	// ETag returns the current ETag of key.
	ETag(ctx context.Context, key string) (string, error)
}

// ValidateBucket checks an S3 bucket name against the rules of S3
// (3 to 63 characters: lowercase letters, digits, dots and hyphens,
// starting and ending with a letter or digit, no "..", not an IP
// address), so that a bad name is reported as such instead of as the
// store's "400 Bad Request".
func ValidateBucket(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("bucket name %q %s: S3 bucket names are 3 to 63 characters of lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit; fix the sink URL", name, why)
	}
	if len(name) < 3 || len(name) > 63 {
		return bad(fmt.Sprintf("has %d characters", len(name)))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return bad(fmt.Sprintf("has %q at byte %d", c, i))
		}
	}
	if first, last := name[0], name[len(name)-1]; first == '.' || first == '-' || last == '.' || last == '-' {
		return bad("starts or ends with a dot or hyphen")
	}
	if strings.Contains(name, "..") {
		return bad(`has ".."`)
	}
	if net.ParseIP(name) != nil {
		return bad("is an IP address")
	}
	return nil
}
