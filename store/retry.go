package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
)

// ErrPermanent marks storage errors that retrying cannot fix (missing
// bucket, access denied, bad credentials).
var ErrPermanent = errors.New("permanent storage error")

// credentialCodes are the S3 (and STS) error codes that mean the request's
// credentials are missing, wrong, expired or not allowed.
var credentialCodes = map[string]bool{
	"AccessDenied": true, "Forbidden": true, "InvalidAccessKeyId": true, "SignatureDoesNotMatch": true,
	"InvalidToken": true, "ExpiredToken": true, "TokenRefreshRequired": true, "InvalidSecurity": true,
	"AccountProblem": true, "AllAccessDisabled": true, "InvalidClientTokenId": true, "UnrecognizedClientException": true,
}

// credentialsError is a failure to find or refresh credentials, as the
// credential provider of every S3 store reports it (see credentialSource).
type credentialsError struct{ err error }

func (e *credentialsError) Error() string { return e.err.Error() }
func (e *credentialsError) Unwrap() error { return e.err }

// credentialSource marks the errors of the provider it wraps as
// credentialsError, so that they are told by type, not by their text.
type credentialSource struct{ aws.CredentialsProvider }

func (c credentialSource) Retrieve(ctx context.Context) (aws.Credentials, error) {
	cr, err := c.CredentialsProvider.Retrieve(ctx)
	if err != nil && ctx.Err() == nil {
		return cr, &credentialsError{err}
	}
	return cr, err
}

// isCredentialError tells an error caused by the credentials, by type (no
// credentials could be retrieved, or the SDK could not sign) or by code.
// A credential provider that could not reach its own service (the
// instance metadata service, STS) for a transient reason is not one: that
// is retried.
func isCredentialError(err error) bool {
	var missing *credentialsError
	if errors.As(err, &missing) {
		return sdkRetryables.IsErrorRetryable(missing.err) != aws.TrueTernary
	}
	var sign *v4.SigningError
	if errors.As(err, &sign) {
		return true
	}
	var api smithy.APIError
	return errors.As(err, &api) && credentialCodes[api.ErrorCode()]
}

// sdkRetryables is the SDK standard retryer's own classification:
// throttling codes, 500/502/503/504, 429, RequestTimeout, connection
// errors (dial, reset, refused), and errors that say they are retryable.
var sdkRetryables = retry.IsErrorRetryables(retry.DefaultRetryables)

// retryable is the allow-list: an error is retried only when it is
// throttling, a 5xx answer, a timeout, a broken connection, or what the
// SDK's standard retryer retries. Everything else (a 4xx, a TLS or
// configuration error, an unknown failure) fails at once, so that a
// mistake is reported in seconds instead of after --s3-retry-for.
func retryable(err error) bool {
	switch {
	case err == nil, errors.Is(err, context.Canceled),
		errors.Is(err, ErrPermanent), errors.Is(err, ErrNotExist), errors.Is(err, ErrPreconditionFailed),
		errors.Is(err, ErrOutcomeUnknown), isCredentialError(err):
		return false
	}
	if sdkRetryables.IsErrorRetryable(err) == aws.TrueTernary {
		return true
	}
	var resp *awshttp.ResponseError
	if errors.As(err, &resp) && resp.HTTPStatusCode() >= 500 {
		return true
	}
	var timeout interface{ Timeout() bool }
	if errors.As(err, &timeout) && timeout.Timeout() {
		return true
	}
	// A connection the store closed mid-request: EOF inside the transport.
	var transport *url.Error
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &transport) && errors.Is(err, io.EOF)
}

// retry runs fn until it succeeds, fails with an error that is not on the
// allow-list (see retryable), the context ends, or RetryFor would pass
// before the next attempt. Between attempts it sleeps a capped exponential
// backoff with full jitter (a ceiling of 200ms doubling up to MaxBackoff). fn returns
// errors already explained (see explain), wrapping the SDK's error.
func (s *S3) retry(ctx context.Context, op, key string, fn func() error) error {
	start := time.Now()
	ceiling := min(200*time.Millisecond, s.cfg.MaxBackoff)
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || !retryable(err) {
			return err
		}
		wait := rand.N(ceiling) + time.Millisecond
		ceiling = min(2*ceiling, s.cfg.MaxBackoff)
		if elapsed := time.Since(start); elapsed+wait > s.cfg.RetryFor {
			return fmt.Errorf("%w (gave up after %d attempts in %s; --s3-retry-for bounds this)", err, attempt, elapsed.Round(time.Millisecond))
		}
		s.log.Warn("storage request failed; retrying", "op", op, "key", key, "attempt", attempt, "retry_in", wait.Round(time.Millisecond), "error", err)
		if s.cfg.OnRetry != nil {
			s.cfg.OnRetry(op)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}
