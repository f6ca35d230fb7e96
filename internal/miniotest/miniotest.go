// Package miniotest gives tests a real MinIO server: the shared one that
// scripts/test.sh starts (EXPORTER_TEST_S3_ENDPOINT), or one of their own
// that they can stop and start again (EXPORTER_TEST_MINIO_BIN).
package miniotest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

// Creds are the endpoint and keys of a MinIO server.
type Creds struct {
	Endpoint, AccessKey, SecretKey string
}

// Shared returns the server the test script started, or skips the test.
func Shared(t testing.TB) Creds {
	t.Helper()
	c := Creds{Endpoint: os.Getenv("EXPORTER_TEST_S3_ENDPOINT"), AccessKey: os.Getenv("EXPORTER_TEST_S3_ACCESS_KEY"),
		SecretKey: os.Getenv("EXPORTER_TEST_S3_SECRET_KEY")}
	if c.Endpoint == "" {
		t.Skip("EXPORTER_TEST_S3_ENDPOINT is not set: run scripts/test.sh, which starts MinIO")
	}
	return c
}

var bucketSeq atomic.Int64

// NewBucket creates a fresh bucket on c and returns a store on it.
func NewBucket(t testing.TB, c Creds, prefix string, mutate func(*store.S3Config)) (*store.S3, store.S3Config) {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 30 {
		name = name[:30]
	}
	bucket := fmt.Sprintf("t-%s-%d-%d", strings.Trim(name, "-"), time.Now().UnixNano()%1e9, bucketSeq.Add(1))
	cfg := store.S3Config{Bucket: bucket, Prefix: prefix, Endpoint: c.Endpoint, Region: "us-east-1",
		AccessKeyID: c.AccessKey, SecretAccessKey: c.SecretKey, RetryFor: 30 * time.Second}
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := store.NewS3(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, cfg
}

// Download copies every object of s into dir, keeping the key layout.
func Download(t testing.TB, s *store.S3, dir string) int {
	t.Helper()
	ctx := context.Background()
	keys, err := s.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		data, err := s.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(k))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return len(keys)
}

// Server is a MinIO process owned by one test.
type Server struct {
	Creds
	bin, data, addr string
	cmd             *exec.Cmd
	t               testing.TB
}

// Own starts a MinIO server for this test alone, or skips when the binary
// is not available.
func Own(t testing.TB) *Server {
	t.Helper()
	bin := os.Getenv("EXPORTER_TEST_MINIO_BIN")
	if bin == "" {
		t.Skip("EXPORTER_TEST_MINIO_BIN is not set: run scripts/test.sh, which builds MinIO")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &Server{bin: bin, data: t.TempDir(), addr: addr, t: t,
		Creds: Creds{Endpoint: "http://" + addr, AccessKey: "own-minio-user", SecretKey: "own-minio-secret-key"}}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// Start starts the server (again) on its address and data folder and waits
// until it is ready.
func (s *Server) Start() {
	s.t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.t.Fatal(err)
	}
	console := l.Addr().String()
	l.Close()
	cmd := exec.Command(s.bin, "server", s.data, "--address", s.addr, "--console-address", console, "--quiet")
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+s.AccessKey, "MINIO_ROOT_PASSWORD="+s.SecretKey)
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.Endpoint + "/minio/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.t.Fatalf("MinIO at %s did not become ready", s.addr)
}

// Stop kills the server; its data folder stays.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		s.cmd = nil
	}
}
