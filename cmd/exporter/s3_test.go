package main

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/miniotest"
)

// TestStandardAWSEnvironmentIsEnough: the AWS_* variables alone point the
// exporter at MinIO (a custom endpoint implies path-style addressing), and
// the credentials appear nowhere in the output, even at debug level.
func TestStandardAWSEnvironmentIsEnough(t *testing.T) {
	c := miniotest.Shared(t)
	s3, cfg := miniotest.NewBucket(t, c, "", nil)
	_ = s3
	env := map[string]string{
		"AWS_ACCESS_KEY_ID": c.AccessKey, "AWS_SECRET_ACCESS_KEY": c.SecretKey,
		"AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL_S3": c.Endpoint,
	}
	code, out, stderr := runExporter(t, env, "run", "--source", "file:../../testdata/goldengate/sample.jsonl",
		"--sink", "s3://"+cfg.Bucket+"/exports/gg", "--once", "--log-level", "debug", "--log-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "rows written:   SALES.ORDERS                   6") {
		t.Errorf("summary:\n%s", out)
	}
	keys, err := s3.List(t.Context(), "exports/gg/")
	if err != nil {
		t.Fatal(err)
	}
	var data, schemas, checkpoints int
	for _, k := range keys {
		switch {
		case strings.HasSuffix(k, ".parquet"):
			data++
		case strings.Contains(k, "/_schemas/"):
			schemas++
		case strings.Contains(k, "/_checkpoints/"):
			checkpoints++
		}
	}
	if data == 0 || schemas != 4 || checkpoints != 1 {
		t.Errorf("objects under the prefix: %d data, %d schemas, %d checkpoints: %v", data, schemas, checkpoints, keys)
	}
	for _, secret := range []string{c.SecretKey, c.AccessKey} {
		if strings.Contains(out+stderr, secret) {
			t.Errorf("a credential appears in the output")
		}
	}
}

func TestMissingBucketAndBadCredentialsFailFast(t *testing.T) {
	c := miniotest.Shared(t)
	for _, tc := range []struct {
		name, key, secret, bucket, want string
	}{
		{"missing bucket", c.AccessKey, c.SecretKey, "no-such-bucket-anywhere", "does not exist"},
		{"bad credentials", "not-a-user", "not-the-secret-at-all", "whatever", "credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, _, stderr := runExporter(t, nil, "run", "--source", "file:../../testdata/goldengate/sample.jsonl",
				"--sink", "s3://"+tc.bucket+"/x", "--s3-endpoint", c.Endpoint, "--s3-access-key-id", tc.key,
				"--s3-secret-access-key", tc.secret, "--once")
			if code != exitFailure {
				t.Errorf("exit %d, want %d", code, exitFailure)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr does not say %q:\n%s", tc.want, stderr)
			}
			if strings.Contains(stderr, tc.secret) {
				t.Errorf("the secret appears in the error output")
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %v to fail", d)
			}
		})
	}
}

// TestInspectingS3WithoutCredentialsStopsAtOnce: tables, views and schema,
// like run, stop at once on an S3 sink with no AWS credential anywhere and
// say what to set, instead of retrying for the whole --s3-retry-for. No
// server is needed: the request fails before it is sent.
func TestInspectingS3WithoutCredentialsStopsAtOnce(t *testing.T) {
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "EXPORTER_S3_ACCESS_KEY_ID", "EXPORTER_S3_SECRET_ACCESS_KEY"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s3 := []string{"--sink", "s3://lake/gg", "--s3-endpoint", "http://" + ln.Addr().String(), "--s3-region", "us-east-1", "--s3-retry-for", "10s"}
	for _, args := range [][]string{{"run", "--source", "stdin", "--once"}, {"tables"}, {"views"}, {"schema", "SALES.ORDERS"}} {
		start := time.Now()
		code, _, stderr := runExporter(t, nil, append(args, s3...)...)
		if code != exitFailure || !strings.Contains(stderr, "no AWS credentials found") || !strings.Contains(stderr, "AWS_ACCESS_KEY_ID") ||
			!strings.Contains(stderr, "--s3-access-key-id") {
			t.Errorf("%v: exit %d, want %d, saying what to set; stderr: %s", args, code, exitFailure, stderr)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%v: took %v to fail", args, d.Round(time.Millisecond))
		}
	}
}
