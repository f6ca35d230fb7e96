package store

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"github.com/aws/smithy-go/logging"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/cenkalti/backoff/v5"
)

// S3Config configures an S3-compatible store. Empty fields take the
// standard AWS environment and shared config (AWS_REGION,
// AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, profiles, web identity,
// instance roles).
type S3Config struct {
	Bucket string
	Prefix string // key prefix inside the bucket, without leading or trailing /

	Endpoint string // custom endpoint URL (MinIO, Ceph); implies path-style unless PathStyle says otherwise
	Region   string
	// PathStyle forces (true) or forbids (false) path-style addressing;
	// nil means path-style exactly when a custom endpoint is set.
	PathStyle *bool

	AccessKeyID     string // static keys (MinIO); empty uses the standard chain
	SecretAccessKey string
	SessionToken    string

	CABundle           string // PEM file of extra CAs for a private endpoint
	InsecureSkipVerify bool   // only for tests against self-signed endpoints

	PartSize          int64 // multipart part size; default 16 MiB (minimum 5 MiB)
	MultipartAbove    int64 // use multipart above this size; default 32 MiB
	UploadConcurrency int   // parts uploaded at once per object; default 4

	SSE          string // "", "AES256" (SSE-S3) or "aws:kms" (SSE-KMS)
	SSEKMSKeyID  string // key id for aws:kms
	StorageClass string // e.g. STANDARD_IA; empty = bucket default

	RequestTimeout time.Duration // per request attempt; default 2m
	// RetryFor bounds how long one operation is retried through throttling,
	// 5xx and network errors (capped, jittered exponential backoff);
	// default 15m. Permanent errors are never retried.
	RetryFor   time.Duration
	MaxBackoff time.Duration // cap of the backoff; default 20s

	Logger *slog.Logger
	// OnRetry, when set, is called for every retried request (metrics).
	OnRetry func(op string) `yaml:"-"`
}

// S3 stores objects in an S3-compatible bucket.
type S3 struct {
	cfg      S3Config
	client   *s3.Client
	uploader *transfermanager.Client
	log      *slog.Logger
}

// NewS3 builds the client and checks the configuration; it does not
// contact the endpoint (see Check).
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("s3: no bucket given (want s3://BUCKET/PREFIX)")
	}
	cfg.Prefix = strings.Trim(cfg.Prefix, "/")
	if cfg.PartSize == 0 {
		cfg.PartSize = 16 << 20
	}
	if cfg.PartSize < 5<<20 {
		return nil, fmt.Errorf("s3: part size %d is below the S3 minimum of 5 MiB", cfg.PartSize)
	}
	if cfg.MultipartAbove == 0 {
		cfg.MultipartAbove = 32 << 20
	}
	if cfg.UploadConcurrency <= 0 {
		cfg.UploadConcurrency = 4
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 2 * time.Minute
	}
	if cfg.RetryFor <= 0 {
		cfg.RetryFor = 15 * time.Minute
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 20 * time.Second
	}
	switch cfg.SSE {
	case "", "AES256", "aws:kms":
	default:
		return nil, fmt.Errorf("s3: server-side encryption %q is not one of AES256 or aws:kms", cfg.SSE)
	}
	if cfg.SSEKMSKeyID != "" && cfg.SSE != "aws:kms" {
		return nil, errors.New("s3: a KMS key id needs server-side encryption aws:kms")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}

	httpClient, err := newHTTPClient(cfg)
	if err != nil {
		return nil, err
	}
	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithHTTPClient(httpClient),
		// One retry policy, ours (see retry): the SDK makes one attempt.
		awsconfig.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
		// The SDK's own log lines are plain text on stderr, in the middle
		// of the exporter's JSON log; what they warn of (an IMDSv1
		// fallback) surfaces in the errors below when it matters.
		awsconfig.WithLogger(logging.Nop{}),
	}
	if cfg.Region != "" {
		opts = append(opts, awsconfig.WithRegion(cfg.Region))
	}
	if cfg.AccessKeyID != "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)))
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3: load AWS configuration: %w", err)
	}
	if awsCfg.Region == "" {
		awsCfg.Region = "us-east-1"
	}
	endpoint := cfg.Endpoint
	if endpoint == "" {
		endpoint = firstNonEmpty(os.Getenv("AWS_ENDPOINT_URL_S3"), os.Getenv("AWS_ENDPOINT_URL"))
	}
	pathStyle := endpoint != ""
	if cfg.PathStyle != nil {
		pathStyle = *cfg.PathStyle
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = pathStyle
	})
	up := transfermanager.New(client, func(o *transfermanager.Options) {
		o.PartSizeBytes = cfg.PartSize
		o.MultipartUploadThreshold = cfg.MultipartAbove
		o.Concurrency = cfg.UploadConcurrency
		// Abort a failed multipart upload with a fresh context, so that a
		// cancelled run leaves no incomplete upload behind.
		o.FailTimeout = 30 * time.Second
		o.ChecksumAlgorithm = tmtypes.ChecksumAlgorithmCrc32
	})
	return &S3{cfg: cfg, client: client, uploader: up, log: cfg.Logger}, nil
}

type noRateLimit struct{}

func (noRateLimit) GetToken(context.Context, uint) (func() error, error) {
	return func() error { return nil }, nil
}
func (noRateLimit) AddTokens(uint) error { return nil }

// newHTTPClient builds the SDK's own buildable client so that the
// standard AWS_CA_BUNDLE setting keeps working next to ours.
func newHTTPClient(cfg S3Config) (*awshttp.BuildableClient, error) {
	var pool *x509.CertPool
	if cfg.CABundle != "" {
		pem, err := os.ReadFile(cfg.CABundle)
		if err != nil {
			return nil, fmt.Errorf("s3: CA bundle: %w", err)
		}
		if pool, err = x509.SystemCertPool(); err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("s3: CA bundle %s holds no PEM certificate", cfg.CABundle)
		}
	}
	return awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.ResponseHeaderTimeout = cfg.RequestTimeout
		if pool != nil || cfg.InsecureSkipVerify {
			if tr.TLSClientConfig == nil {
				tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
			}
			if pool != nil {
				tr.TLSClientConfig.RootCAs = pool
			}
			tr.TLSClientConfig.InsecureSkipVerify = cfg.InsecureSkipVerify
		}
	}), nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func (s *S3) String() string {
	if s.cfg.Prefix == "" {
		return "s3://" + s.cfg.Bucket
	}
	return "s3://" + s.cfg.Bucket + "/" + s.cfg.Prefix
}

func (s *S3) key(k string) (string, error) {
	if err := ValidateKey(k); err != nil {
		return "", err
	}
	if s.cfg.Prefix == "" {
		return k, nil
	}
	return s.cfg.Prefix + "/" + k, nil
}

// Check verifies that the bucket exists and the credentials may use it. It
// fails fast on permanent errors, with what to fix in the message.
func (s *S3) Check(ctx context.Context) error {
	_, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.cfg.Bucket)})
	if err != nil {
		return s.explain("check bucket", "", err)
	}
	return nil
}

func (s *S3) Put(ctx context.Context, key string, data []byte) error {
	return s.put(ctx, key, data, nil, nil)
}

// PutIfAbsent writes key only if no object has that key (If-None-Match: *).
// An existing key yields an error wrapping ErrPreconditionFailed.
func (s *S3) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	return s.put(ctx, key, data, aws.String("*"), nil)
}

// PutIfMatch replaces key only if its current ETag is etag (If-Match).
func (s *S3) PutIfMatch(ctx context.Context, key string, data []byte, etag string) error {
	return s.put(ctx, key, data, nil, aws.String(etag))
}

func (s *S3) put(ctx context.Context, key string, data []byte, ifNoneMatch, ifMatch *string) error {
	k, err := s.key(key)
	if err != nil {
		return err
	}
	in := &transfermanager.UploadObjectInput{
		Bucket:      aws.String(s.cfg.Bucket),
		Key:         aws.String(k),
		Body:        bytes.NewReader(data),
		IfNoneMatch: ifNoneMatch,
		IfMatch:     ifMatch,
	}
	if s.cfg.SSE != "" {
		in.ServerSideEncryption = tmtypes.ServerSideEncryption(s.cfg.SSE)
	}
	if s.cfg.SSEKMSKeyID != "" {
		in.SSEKMSKeyID = aws.String(s.cfg.SSEKMSKeyID)
	}
	if s.cfg.StorageClass != "" {
		in.StorageClass = tmtypes.StorageClass(s.cfg.StorageClass)
	}
	mayHaveLanded := false
	return s.retry(ctx, "put", key, func() error {
		in.Body = bytes.NewReader(data)
		_, err := s.uploader.UploadObject(ctx, in)
		if err != nil {
			var mpu transfermanager.MultipartUploadError
			if errors.As(err, &mpu) {
				s.log.Warn("multipart upload failed and was aborted", "key", k, "upload_id", mpu.UploadID(), "error", err)
			}
			err = s.explain("put", key, err)
			conditional := ifNoneMatch != nil || ifMatch != nil
			if conditional && errors.Is(err, ErrPreconditionFailed) && mayHaveLanded {
				// Possibly our own earlier attempt that made the condition
				// false: a fence here could not be told from a success.
				return fmt.Errorf("put %s: %w (%v, after a failed attempt)", key, ErrOutcomeUnknown, err)
			}
			mayHaveLanded = true
			return err
		}
		return nil
	})
}

// ETag returns the current ETag of key, for PutIfMatch.
func (s *S3) ETag(ctx context.Context, key string) (string, error) {
	k, err := s.key(key)
	if err != nil {
		return "", err
	}
	var etag string
	err = s.retry(ctx, "head", key, func() error {
		out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(k)})
		if err != nil {
			return s.explain("head", key, err)
		}
		etag = aws.ToString(out.ETag)
		return nil
	})
	return etag, err
}

func (s *S3) Get(ctx context.Context, key string) ([]byte, error) {
	k, err := s.key(key)
	if err != nil {
		return nil, err
	}
	var data []byte
	err = s.retry(ctx, "get", key, func() error {
		out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(k)})
		if err != nil {
			return s.explain("get", key, err)
		}
		defer out.Body.Close()
		data, err = io.ReadAll(out.Body)
		if err != nil {
			return fmt.Errorf("get %s: %w", key, err)
		}
		return nil
	})
	return data, err
}

func (s *S3) List(ctx context.Context, prefix string) ([]string, error) {
	full := prefix
	if s.cfg.Prefix != "" {
		full = s.cfg.Prefix + "/" + prefix
	}
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(s.cfg.Bucket), Prefix: aws.String(full)})
	var keys []string
	for p.HasMorePages() {
		var page *s3.ListObjectsV2Output
		err := s.retry(ctx, "list", prefix, func() error {
			var err error
			page, err = p.NextPage(ctx)
			if err != nil {
				return s.explain("list", prefix, err)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			k := aws.ToString(o.Key)
			if s.cfg.Prefix != "" {
				k = strings.TrimPrefix(k, s.cfg.Prefix+"/")
			}
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys, nil
}

func (s *S3) Delete(ctx context.Context, key string) error {
	k, err := s.key(key)
	if err != nil {
		return err
	}
	return s.retry(ctx, "delete", key, func() error {
		_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(k)})
		if err != nil {
			return s.explain("delete", key, err)
		}
		return nil
	})
}

// IncompleteUploads lists multipart uploads under the store's prefix that
// were started and neither completed nor aborted.
func (s *S3) IncompleteUploads(ctx context.Context) ([]string, error) {
	out, err := s.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(s.cfg.Bucket), Prefix: aws.String(s.cfg.Prefix)})
	if err != nil {
		return nil, s.explain("list multipart uploads", "", err)
	}
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, aws.ToString(u.Key))
	}
	return keys, nil
}

// ErrPermanent marks storage errors that retrying cannot fix (missing
// bucket, access denied, bad credentials).
var ErrPermanent = errors.New("permanent storage error")

// explain turns an SDK error into one that says what failed and what to
// do, wrapping ErrNotExist, ErrPreconditionFailed or ErrPermanent where
// they apply. Credentials never appear in it.
func (s *S3) explain(op, key string, err error) error {
	where := s.String()
	if key != "" {
		where += "/" + key
	}
	var nsk *s3types.NoSuchKey
	if errors.As(err, &nsk) {
		return fmt.Errorf("%s %s: %w", op, where, ErrNotExist)
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "NoSuchKey", "NotFound":
			if op == "check bucket" {
				return fmt.Errorf("%s %s: bucket %q does not exist: create it or fix the sink URL: %w", op, where, s.cfg.Bucket, ErrPermanent)
			}
			return fmt.Errorf("%s %s: %w", op, where, ErrNotExist)
		case "NoSuchBucket":
			return fmt.Errorf("%s %s: bucket %q does not exist: create it or fix the sink URL: %w", op, where, s.cfg.Bucket, ErrPermanent)
		case "PreconditionFailed", "ConditionalRequestConflict":
			return fmt.Errorf("%s %s: %w", op, where, ErrPreconditionFailed)
		case "AccessDenied", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken":
			return fmt.Errorf("%s %s: %s: check the credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the role) and the bucket policy: %w",
				op, where, api.ErrorCode(), ErrPermanent)
		}
		return fmt.Errorf("%s %s: %s: %s", op, where, api.ErrorCode(), api.ErrorMessage())
	}
	if msg := err.Error(); strings.Contains(msg, "get credentials") || strings.Contains(msg, "retrieve credentials") {
		return fmt.Errorf("%s %s: no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or --s3-access-key-id and --s3-secret-access-key), AWS_PROFILE, or give the process a role: %w",
			op, where, err)
	}
	var dial *net.OpError
	if errors.As(err, &dial) && dial.Op == "dial" {
		return fmt.Errorf("%s %s: cannot reach the store at %s: check --s3-endpoint (or the region) and that the store is up: %w", op, where, dial.Addr, err)
	}
	return fmt.Errorf("%s %s: %w", op, where, err)
}

// retry runs fn until it succeeds, fails permanently, the context ends or
// RetryFor has passed, sleeping a capped, jittered exponential backoff
// between attempts. Throttling, 5xx and network errors are retried; a
// missing key, a failed precondition and ErrPermanent are not.
func (s *S3) retry(ctx context.Context, op, key string, fn func() error) error {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 200 * time.Millisecond
	b.MaxInterval = s.cfg.MaxBackoff
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		err := fn()
		if err != nil && (errors.Is(err, ErrPermanent) || errors.Is(err, ErrNotExist) || errors.Is(err, ErrPreconditionFailed) || errors.Is(err, ErrOutcomeUnknown)) {
			return struct{}{}, backoff.Permanent(err)
		}
		return struct{}{}, err
	}, backoff.WithBackOff(b), backoff.WithMaxElapsedTime(s.cfg.RetryFor), backoff.WithNotify(func(err error, next time.Duration) {
		s.log.Warn("storage request failed; retrying", "op", op, "key", key, "retry_in", next.Round(time.Millisecond), "error", err)
		if s.cfg.OnRetry != nil {
			s.cfg.OnRetry(op)
		}
	}))
	return err
}

// CreateBucket creates the store's bucket. The exporter never creates
// buckets by itself; tests and setup tooling use this.
func (s *S3) CreateBucket(ctx context.Context) error {
	_, err := s.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(s.cfg.Bucket)})
	if err != nil {
		return s.explain("create bucket", "", err)
	}
	return nil
}

// OnRetry sets the function told about every retried request.
func (s *S3) OnRetry(f func(op string)) { s.cfg.OnRetry = f }
