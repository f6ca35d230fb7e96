package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// conformant is everything both stores offer.
type conformant interface {
	Store
}

// testConformance is the one suite every store implementation passes.
func testConformance(t *testing.T, s conformant) {
	ctx := context.Background()
	t.Run("put get list delete", func(t *testing.T) {
		for _, k := range []string{"a/x.parquet", "a/y.parquet", "b/z.json", "a/sub/w.parquet"} {
			if err := s.Put(ctx, k, []byte("data of "+k)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Get(ctx, "a/y.parquet")
		if err != nil || string(got) != "data of a/y.parquet" {
			t.Fatalf("get: %q, %v", got, err)
		}
		keys, err := s.List(ctx, "a/")
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(keys) != "[a/sub/w.parquet a/x.parquet a/y.parquet]" {
			t.Errorf("list a/: %v", keys)
		}
		if err := s.Put(ctx, "a/x.parquet", []byte("replaced")); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Get(ctx, "a/x.parquet"); string(got) != "replaced" {
			t.Errorf("overwrite: %q", got)
		}
		if err := s.Delete(ctx, "a/x.parquet"); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "a/x.parquet"); err != nil {
			t.Errorf("deleting a missing key: %v", err)
		}
		if _, err := s.Get(ctx, "a/x.parquet"); !errors.Is(err, ErrNotExist) {
			t.Errorf("get after delete: %v, want ErrNotExist", err)
		}
	})
	t.Run("conditional writes", func(t *testing.T) {
		etag1, err := s.PutIfAbsent(ctx, "c/cp.json", []byte("v1"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutIfAbsent(ctx, "c/cp.json", []byte("v2")); !errors.Is(err, ErrPreconditionFailed) {
			t.Fatalf("second PutIfAbsent: %v, want ErrPreconditionFailed", err)
		}
		data, etag, err := s.GetWithETag(ctx, "c/cp.json")
		if err != nil || string(data) != "v1" {
			t.Fatalf("refused put changed the object: %q, %v", data, err)
		}
		// The ETags a write returns and a read returns are the object's.
		if head, err := s.ETag(ctx, "c/cp.json"); err != nil || head != etag || etag != etag1 {
			t.Errorf("ETags: PutIfAbsent %q, GetWithETag %q, ETag %q (%v): want one", etag1, etag, head, err)
		}
		etag2, err := s.PutIfMatch(ctx, "c/cp.json", []byte("v2"), etag)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutIfMatch(ctx, "c/cp.json", []byte("v3"), etag); !errors.Is(err, ErrPreconditionFailed) {
			t.Fatalf("PutIfMatch with a stale etag: %v, want ErrPreconditionFailed", err)
		}
		if head, err := s.ETag(ctx, "c/cp.json"); err != nil || head != etag2 || etag2 == etag {
			t.Errorf("PutIfMatch returned ETag %q, the object has %q (%v), the old one was %q", etag2, head, err, etag)
		}
		if _, err := s.PutIfMatch(ctx, "c/cp.json", []byte("v3"), etag2); err != nil {
			t.Errorf("PutIfMatch with the ETag the last write returned: %v", err)
		}
		if got, _ := s.Get(ctx, "c/cp.json"); string(got) != "v3" {
			t.Errorf("after the writes: %q, want v3", got)
		}
	})
	t.Run("unsafe keys", func(t *testing.T) {
		for _, k := range []string{"", "/abs", "../up", "a/../../b", "a//b", "a/./b", "trail/", "ctl\x01"} {
			if err := s.Put(ctx, k, []byte("x")); err == nil {
				t.Errorf("key %q accepted", k)
			}
		}
	})
}

func TestLocalConformance(t *testing.T) {
	s, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	testConformance(t, s)
}

func TestLocalPutLeavesNoTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	s, _ := NewLocal(dir)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Put(ctx, "x/y.parquet", []byte("z")); err == nil {
		t.Fatal("put with a cancelled context succeeded")
	}
	if err := s.Put(context.Background(), "x/y.parquet", []byte("z")); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir + "/x")
	if len(entries) != 1 || entries[0].Name() != "y.parquet" {
		t.Errorf("folder holds %v, want only y.parquet", entries)
	}
}

// s3ForTest returns a store on a new bucket of the MinIO server the test
// script started, or skips when none is configured.
func s3ForTest(t *testing.T, mutate func(*S3Config)) *S3 {
	t.Helper()
	endpoint := os.Getenv("EXPORTER_TEST_S3_ENDPOINT")
	if endpoint == "" {
		t.Skip("EXPORTER_TEST_S3_ENDPOINT is not set; scripts/test.sh starts MinIO and sets it")
	}
	bucket := fmt.Sprintf("conf-%d", time.Now().UnixNano())
	cfg := S3Config{Bucket: bucket, Prefix: "lake", Endpoint: endpoint, Region: "us-east-1",
		AccessKeyID: os.Getenv("EXPORTER_TEST_S3_ACCESS_KEY"), SecretAccessKey: os.Getenv("EXPORTER_TEST_S3_SECRET_KEY"),
		RetryFor: 5 * time.Second}
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := NewS3(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestS3Conformance(t *testing.T) {
	testConformance(t, s3ForTest(t, nil))
}

func TestS3MultipartAboveThreshold(t *testing.T) {
	s := s3ForTest(t, func(c *S3Config) { c.PartSize = 5 << 20; c.MultipartAbove = 6 << 20 })
	data := make([]byte, 13<<20)
	rand.Read(data)
	ctx := context.Background()
	if err := s.Put(ctx, "big/file.parquet", data); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "big/file.parquet")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("multipart object read back differs (%d bytes, %v)", len(got), err)
	}
	etag, _ := s.ETag(ctx, "big/file.parquet")
	// A multipart ETag is "<md5 of part md5s>-<part count>".
	if !bytes.HasSuffix([]byte(etag), []byte(`-3"`)) {
		t.Errorf("ETag %s does not show a 3-part upload", etag)
	}
}

func TestS3AbortedUploadLeavesNothing(t *testing.T) {
	s := s3ForTest(t, func(c *S3Config) { c.PartSize = 5 << 20; c.MultipartAbove = 6 << 20; c.UploadConcurrency = 1 })
	data := make([]byte, 40<<20)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(150 * time.Millisecond); cancel() }()
	if err := s.Put(ctx, "big/cancelled.parquet", data); err == nil {
		t.Skip("the upload finished before it could be cancelled")
	}
	// the abort runs on a fresh context; give it a moment
	deadline := time.Now().Add(10 * time.Second)
	for {
		ups, err := s.IncompleteUploads(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(ups) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("incomplete multipart uploads left behind: %v", ups)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := s.Get(context.Background(), "big/cancelled.parquet"); !errors.Is(err, ErrNotExist) {
		t.Errorf("cancelled upload left an object: %v", err)
	}
}

func TestS3PermanentErrorsAreFastAndClear(t *testing.T) {
	s := s3ForTest(t, nil)
	missing := *s
	missing.cfg.Bucket = "no-such-bucket-here"
	start := time.Now()
	err := missing.Check(context.Background())
	if !errors.Is(err, ErrPermanent) || !bytes.Contains([]byte(err.Error()), []byte("does not exist")) {
		t.Errorf("missing bucket: %v", err)
	}
	bad := s3ForTestCreds(t, "wrong-key", "wrong-secret-value")
	err2 := bad.Check(context.Background())
	if !errors.Is(err2, ErrPermanent) || !bytes.Contains([]byte(err2.Error()), []byte("credentials")) {
		t.Errorf("bad credentials: %v", err2)
	}
	if bytes.Contains([]byte(err2.Error()), []byte("wrong-secret-value")) {
		t.Errorf("the secret appears in the error: %v", err2)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("permanent errors took %v; they must not be retried for long", d)
	}
}

func s3ForTestCreds(t *testing.T, key, secret string) *S3 {
	s, err := NewS3(context.Background(), S3Config{Bucket: "whatever", Endpoint: os.Getenv("EXPORTER_TEST_S3_ENDPOINT"),
		Region: "us-east-1", AccessKeyID: key, SecretAccessKey: secret})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// An endpoint nothing listens on, and a process with no credentials at
// all, are both named in the error with what to do about them.
func TestS3UnreachableAndCredentiallessErrorsSayWhatToFix(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	s, err := NewS3(context.Background(), S3Config{Bucket: "lake", Endpoint: "http://" + addr, Region: "us-east-1",
		AccessKeyID: "k", SecretAccessKey: "s", RetryFor: 300 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "cannot reach the store at "+addr) || !strings.Contains(err.Error(), "--s3-endpoint") {
		t.Errorf("unreachable endpoint: %v", err)
	}

	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	ln2, _ := net.Listen("tcp", "127.0.0.1:0") // the request must fail before it is sent
	defer ln2.Close()
	s, err = NewS3(context.Background(), S3Config{Bucket: "lake", Endpoint: "http://" + ln2.Addr().String(), Region: "us-east-1",
		RetryFor: 300 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "no AWS credentials found") || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Errorf("no credentials: %v", err)
	}
}
