package store

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
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
	"github.com/aws/smithy-go/logging"
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
	endpoint string // the custom endpoint, if any, for messages
	region   string
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
	if err := ValidateBucket(cfg.Bucket); err != nil {
		return nil, fmt.Errorf("s3: %w", err)
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
	if awsCfg.Credentials != nil {
		awsCfg.Credentials = aws.NewCredentialsCache(credentialSource{awsCfg.Credentials})
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
	return &S3{cfg: cfg, endpoint: endpoint, region: awsCfg.Region, client: client, uploader: up, log: cfg.Logger}, nil
}

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
		return s.explain(ctx, "check bucket", "", err)
	}
	return nil
}

func (s *S3) Put(ctx context.Context, key string, data []byte) error {
	return s.put(ctx, key, data, nil, nil)
}

// PutIfAbsent writes key only if no object has that key (If-None-Match: *),
// and returns the ETag the store gave it. An existing key yields an error
// wrapping ErrPreconditionFailed.
func (s *S3) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	return s.putETag(ctx, key, data, aws.String("*"), nil)
}

// PutIfMatch replaces key only if its current ETag is etag (If-Match), and
// returns the ETag the store gave the new object: from the write's own
// response, since a HEAD after it could see a later writer's object.
func (s *S3) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	return s.putETag(ctx, key, data, nil, aws.String(etag))
}

func (s *S3) put(ctx context.Context, key string, data []byte, ifNoneMatch, ifMatch *string) error {
	_, err := s.putETag(ctx, key, data, ifNoneMatch, ifMatch)
	return err
}

func (s *S3) putETag(ctx context.Context, key string, data []byte, ifNoneMatch, ifMatch *string) (string, error) {
	k, err := s.key(key)
	if err != nil {
		return "", err
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
	var etag string
	err = s.retry(ctx, "put", key, func() error {
		in.Body = bytes.NewReader(data)
		out, err := s.uploader.UploadObject(ctx, in)
		if err != nil {
			var mpu transfermanager.MultipartUploadError
			if errors.As(err, &mpu) {
				s.log.Warn("multipart upload failed and was aborted", "key", k, "upload_id", mpu.UploadID(), "error", err)
			}
			err = s.explain(ctx, "put", key, err)
			conditional := ifNoneMatch != nil || ifMatch != nil
			if conditional && errors.Is(err, ErrPreconditionFailed) && mayHaveLanded {
				// Possibly our own earlier attempt that made the condition
				// false: a fence here could not be told from a success.
				return fmt.Errorf("put %s: %w (%v, after a failed attempt)", key, ErrOutcomeUnknown, err)
			}
			mayHaveLanded = true
			return err
		}
		etag = aws.ToString(out.ETag)
		return nil
	})
	return etag, err
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
			return s.explain(ctx, "head", key, err)
		}
		etag = aws.ToString(out.ETag)
		return nil
	})
	return etag, err
}

func (s *S3) Get(ctx context.Context, key string) ([]byte, error) {
	data, _, err := s.GetWithETag(ctx, key)
	return data, err
}

// GetWithETag reads key and the ETag of the object read, from one
// response.
func (s *S3) GetWithETag(ctx context.Context, key string) ([]byte, string, error) {
	k, err := s.key(key)
	if err != nil {
		return nil, "", err
	}
	var data []byte
	var etag string
	err = s.retry(ctx, "get", key, func() error {
		out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(k)})
		if err != nil {
			return s.explain(ctx, "get", key, err)
		}
		defer out.Body.Close()
		data, err = io.ReadAll(out.Body)
		if err != nil {
			return fmt.Errorf("get %s: %w", key, err)
		}
		etag = aws.ToString(out.ETag)
		return nil
	})
	return data, etag, err
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
				return s.explain(ctx, "list", prefix, err)
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
			return s.explain(ctx, "delete", key, err)
		}
		return nil
	})
}

// IncompleteUploads lists multipart uploads under the store's prefix that
// were started and neither completed nor aborted.
func (s *S3) IncompleteUploads(ctx context.Context) ([]string, error) {
	out, err := s.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(s.cfg.Bucket), Prefix: aws.String(s.cfg.Prefix)})
	if err != nil {
		return nil, s.explain(ctx, "list multipart uploads", "", err)
	}
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, aws.ToString(u.Key))
	}
	return keys, nil
}

// explain turns an SDK error into one that says what failed and what to
// do, wrapping ErrNotExist, ErrPreconditionFailed or ErrPermanent where
// they apply and the SDK's error otherwise, so that retryable can still
// classify it. Credentials never appear in it.
func (s *S3) explain(ctx context.Context, op, key string, err error) error {
	where := s.String()
	if key != "" {
		where += "/" + key
	}
	var nsk *s3types.NoSuchKey
	if errors.As(err, &nsk) {
		return fmt.Errorf("%s %s: %w", op, where, ErrNotExist)
	}
	if isCredentialError(err) {
		var api smithy.APIError
		if errors.As(err, &api) {
			return fmt.Errorf("%s %s: %s: check the credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the role) and the bucket policy: %w",
				op, where, api.ErrorCode(), ErrPermanent)
		}
		return fmt.Errorf("%s %s: no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or --s3-access-key-id and --s3-secret-access-key), AWS_PROFILE, or give the process a role: %w",
			op, where, permanent{err})
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
		}
		if retryable(err) {
			return fmt.Errorf("%s %s: %s: %s: %w", op, where, api.ErrorCode(), api.ErrorMessage(), err)
		}
		status := ""
		var resp *awshttp.ResponseError
		if errors.As(err, &resp) {
			status = fmt.Sprintf(" (HTTP %d)", resp.HTTPStatusCode())
		}
		return fmt.Errorf("%s %s: %s%s: %s: not retried (not throttling, a server or a network error): check the bucket name, its policy and settings, and the --s3-* options: %w",
			op, where, api.ErrorCode(), status, api.ErrorMessage(), permanent{err})
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil || isTimeout(err) {
		return fmt.Errorf("%s %s: the store at %s did not answer in time: check --s3-endpoint (or the region), that the store is up and that no proxy or firewall holds the connection; a slow store needs a longer --s3-request-timeout: %w",
			op, where, s.endpointName(), err)
	}
	var dial *net.OpError
	if errors.As(err, &dial) && dial.Op == "dial" {
		return fmt.Errorf("%s %s: cannot reach the store at %s: check --s3-endpoint (or the region) and that the store is up: %w", op, where, dial.Addr, err)
	}
	if errors.Is(err, context.Canceled) || retryable(err) {
		return fmt.Errorf("%s %s: %w", op, where, err)
	}
	return fmt.Errorf("%s %s: %w: not retried: check --s3-endpoint, --s3-ca-bundle and the network between here and the store", op, where, permanent{err})
}

// permanent marks an SDK error as one retrying cannot fix, keeping its
// text and its chain.
type permanent struct{ error }

func (p permanent) Unwrap() error        { return p.error }
func (p permanent) Is(target error) bool { return target == ErrPermanent }

// isTimeout tells an attempt that timed out waiting for the store.
func isTimeout(err error) bool {
	var timeout interface{ Timeout() bool }
	return errors.As(err, &timeout) && timeout.Timeout()
}

// endpointName names the endpoint requests go to, for messages.
func (s *S3) endpointName() string {
	if s.endpoint != "" {
		return s.endpoint
	}
	return "the AWS S3 endpoint of region " + s.region
}

// CreateBucket creates the store's bucket. The exporter never creates
// buckets by itself; tests and setup tooling use this.
func (s *S3) CreateBucket(ctx context.Context) error {
	_, err := s.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(s.cfg.Bucket)})
	if err != nil {
		return s.explain(ctx, "create bucket", "", err)
	}
	return nil
}

// OnRetry sets the function told about every retried request.
func (s *S3) OnRetry(f func(op string)) { s.cfg.OnRetry = f }
