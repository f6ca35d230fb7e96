package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeS3 answers every request with the next of its answers (the last one
// repeats) and counts the requests.
type fakeS3 struct {
	answers []func(w http.ResponseWriter)
	calls   atomic.Int32
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(f.calls.Add(1))
	f.answers[min(n, len(f.answers))-1](w)
}

func s3Error(status int, code string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>the %s message</Message><RequestId>r1</RequestId></Error>`, code, code)
	}
}

func ok(w http.ResponseWriter) { w.Write([]byte("data")) }

// reset closes the connection with a TCP RST instead of answering.
func reset(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	conn.(*net.TCPConn).SetLinger(0)
	conn.Close()
}

func fakeStore(t *testing.T, endpoint string, retryFor time.Duration) *S3 {
	t.Helper()
	s, err := NewS3(context.Background(), S3Config{Bucket: "lake", Endpoint: endpoint, Region: "us-east-1",
		AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "the-secret", RetryFor: retryFor, MaxBackoff: 5 * time.Millisecond,
		RequestTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestS3RetriesOnlyTheAllowList: throttling, 5xx, resets and timeouts are
// retried until the store answers; any other error fails on its first
// attempt with its code and what to check; credential codes wrap
// ErrPermanent and say to check the credentials.
func TestS3RetriesOnlyTheAllowList(t *testing.T) {
	hang := func(w http.ResponseWriter) { time.Sleep(time.Second) }
	for _, tc := range []struct {
		name      string
		answers   []func(w http.ResponseWriter)
		wantCalls int32
		wantErr   []string // empty: success
		permanent bool
	}{
		{"throttled", []func(http.ResponseWriter){s3Error(503, "SlowDown"), s3Error(503, "SlowDown"), ok}, 3, nil, false},
		{"internal error", []func(http.ResponseWriter){s3Error(500, "InternalError"), ok}, 2, nil, false},
		{"unknown 5xx", []func(http.ResponseWriter){s3Error(599, "WhoKnows"), ok}, 2, nil, false},
		{"too many requests", []func(http.ResponseWriter){s3Error(429, "TooManyRequests"), ok}, 2, nil, false},
		{"connection reset", []func(http.ResponseWriter){reset, ok}, 2, nil, false},
		{"no answer in time", []func(http.ResponseWriter){hang, ok}, 2, nil, false},
		{"unknown 4xx", []func(http.ResponseWriter){s3Error(400, "InvalidArgument"), ok}, 1,
			[]string{"get s3://lake/k", "InvalidArgument (HTTP 400)", "not retried", "check the bucket name"}, true},
		{"unknown code", []func(http.ResponseWriter){s3Error(409, "SomethingNew"), ok}, 1, []string{"SomethingNew", "not retried"}, true},
		{"bad key id", []func(http.ResponseWriter){s3Error(403, "InvalidAccessKeyId"), ok}, 1, []string{"InvalidAccessKeyId", "check the credentials"}, true},
		{"bad signature", []func(http.ResponseWriter){s3Error(403, "SignatureDoesNotMatch"), ok}, 1, []string{"SignatureDoesNotMatch", "check the credentials"}, true},
		{"expired token", []func(http.ResponseWriter){s3Error(400, "ExpiredToken"), ok}, 1, []string{"ExpiredToken", "check the credentials"}, true},
		{"access denied", []func(http.ResponseWriter){s3Error(403, "AccessDenied"), ok}, 1, []string{"AccessDenied", "check the credentials"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeS3{answers: tc.answers}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			s := fakeStore(t, srv.URL, time.Minute)
			data, err := s.Get(context.Background(), "k")
			if got := fake.calls.Load(); got != tc.wantCalls {
				t.Errorf("%d requests, want %d (error: %v)", got, tc.wantCalls, err)
			}
			if len(tc.wantErr) == 0 {
				if err != nil || string(data) != "data" {
					t.Fatalf("got %q, %v", data, err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q: %v", w, err)
				}
			}
			if errors.Is(err, ErrPermanent) != tc.permanent {
				t.Errorf("errors.Is(err, ErrPermanent) = %v: %v", !tc.permanent, err)
			}
			if strings.Contains(err.Error(), "the-secret") {
				t.Errorf("the secret appears in the error: %v", err)
			}
		})
	}
}

// TestS3RetryGivesUpAfterRetryFor: a store that keeps throttling is tried
// several times, then the error names the code and the limit.
func TestS3RetryGivesUpAfterRetryFor(t *testing.T) {
	fake := &fakeS3{answers: []func(http.ResponseWriter){s3Error(503, "SlowDown")}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	s := fakeStore(t, srv.URL, 2*time.Second)
	_, err := s.Get(context.Background(), "k")
	if err == nil || !strings.Contains(err.Error(), "SlowDown") || !strings.Contains(err.Error(), "--s3-retry-for") {
		t.Errorf("error: %v", err)
	}
	if n := fake.calls.Load(); n < 2 {
		t.Errorf("%d requests: throttling was not retried", n)
	}
}

// TestS3RetryStopsWhenTheContextEnds: a cancelled context ends the loop
// between attempts, with the last error.
func TestS3RetryStopsWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	fake := &fakeS3{answers: []func(http.ResponseWriter){func(w http.ResponseWriter) { cancel(); s3Error(503, "SlowDown")(w) }}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	s := fakeStore(t, srv.URL, time.Hour)
	if _, err := s.Get(ctx, "k"); err == nil {
		t.Fatal("no error")
	}
	if n := fake.calls.Load(); n != 1 {
		t.Errorf("%d requests after the context was cancelled in the first", n)
	}
}

// TestS3CheckNamesTheEndpointThatDoesNotAnswer: an endpoint that accepts
// connections and never answers is named in Check's error, with what to
// check, instead of "context deadline exceeded" alone.
func TestS3CheckNamesTheEndpointThatDoesNotAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accept, read nothing, answer nothing
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	endpoint := "http://" + ln.Addr().String()
	s, err := NewS3(context.Background(), S3Config{Bucket: "lake", Endpoint: endpoint, Region: "us-east-1",
		AccessKeyID: "k", SecretAccessKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err = s.Check(ctx)
	if err == nil || !strings.Contains(err.Error(), "the store at "+endpoint+" did not answer") || !strings.Contains(err.Error(), "--s3-endpoint") {
		t.Errorf("error: %v", err)
	}
}

func TestValidateBucket(t *testing.T) {
	for _, good := range []string{"lake", "my-lake.2026", "a0b", strings.Repeat("a", 63)} {
		if err := ValidateBucket(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
	for _, bad := range []string{"Bad_Bucket!", "ab", strings.Repeat("a", 64), "-lake", "lake.", "la..ke", "192.168.1.1", "UPPER"} {
		if err := ValidateBucket(bad); err == nil || !strings.Contains(err.Error(), "lowercase letters, digits, dots and hyphens") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := NewS3(context.Background(), S3Config{Bucket: "Bad_Bucket!"}); err == nil || !strings.Contains(err.Error(), `"Bad_Bucket!"`) {
		t.Errorf("NewS3 with a bad bucket name: %v", err)
	}
}
