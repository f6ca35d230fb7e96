package store

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// Config says which store to open and how.
type Config struct {
	// URL is file://DIR (a relative DIR as file://./DIR) or
	// s3://BUCKET/PREFIX.
	URL string
	// MustExist makes a file:// folder that does not exist an error, for
	// commands that only read a lake, instead of a new empty store.
	MustExist bool
	// S3 configures an s3:// store; Bucket and Prefix come from URL.
	S3 S3Config
}

// Open returns the store cfg.URL names. It contacts no server: an S3
// store's bucket and credentials are checked by its Check method.
func Open(ctx context.Context, cfg Config) (Store, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %v", cfg.URL, err)
	}
	switch u.Scheme {
	case "file":
		dir := localDir(cfg.URL, u)
		if cfg.MustExist {
			if _, err := os.Stat(dir); err != nil {
				return nil, fmt.Errorf("sink folder %s: %w: check --sink (it names the folder a run wrote to)", dir, err)
			}
		}
		return NewLocal(dir)
	case "s3":
		s3 := cfg.S3
		s3.Bucket, s3.Prefix = u.Host, strings.Trim(u.Path, "/")
		return NewS3(ctx, s3)
	}
	return nil, fmt.Errorf("%q is not a sink (want file://DIR or s3://BUCKET/PREFIX)", cfg.URL)
}

// localDir is the folder a parsed file:// URL names: file://./DIR and
// file://DIR are relative, file:///DIR absolute.
func localDir(spec string, u *url.URL) string {
	if u.Host == "." || strings.HasPrefix(spec, "file://./") {
		return "." + u.Path
	}
	return u.Host + u.Path
}
