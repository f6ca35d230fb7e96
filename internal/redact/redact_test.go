package redact

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		`broker "u:pass@host:9092" is not HOST:PORT`:          `broker "***@host:9092" is not HOST:PORT`,
		"kafka://alice:s3cr3t@b1:9092,b2:9092/cdc?group=g":    "kafka://***@b1:9092,b2:9092/cdc?group=g",
		"kafka://b1:9092,bob:hunter2@b2:9092/cdc":             "kafka://***@b2:9092/cdc",
		"kafka://u:pa,ss@h:1/t":                               "kafka://***@h:1/t",
		"https://AKID:SECRET@minio:9000/lake":                 "https://***@minio:9000/lake",
		"postgres://u:p@db/x?sslmode=disable&password=pw":     "postgres://***@db/x?sslmode=disable&password=***",
		"GET /lake/k?X-Amz-Signature=abc123&X-Amz-Expires=60": "GET /lake/k?X-Amz-Signature=***&X-Amz-Expires=60",
		"no credentials here: s3://lake/gg, host:9092":        "no credentials here: s3://lake/gg, host:9092",
		"mail ops@example.com about 10:30":                    "mail ops@example.com about 10:30",
		// a password with a / or an @ its writer did not percent-encode
		"reach postgres://bob:ab/cdTAIL@127.0.0.1:1/cat (is it running":    "reach postgres://***@127.0.0.1:1/cat (is it running",
		"postgres://bob:Xy@Tail9@db:5432/cat":                              "postgres://***@db:5432/cat",
		`got "s3.endpoint" (from envar X="credential=client:SECRET_A;s3")`: `got "s3.endpoint" (from envar X="credential=***;s3")`,
		`expected "<key>=<value>" but got "credential:client:SECRET_C"`:    `expected "<key>=<value>" but got "credential:***"`,
		"s3.secret-access-key=K1 s3.session-token:T1 client_secret=C1":     "s3.secret-access-key=*** s3.session-token:*** client_secret=***",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q)\n = %q\nwant %q", in, got, want)
		}
	}
	for _, secret := range []string{"pass", "s3cr3t", "hunter2", "SECRET", "abc123"} {
		if strings.Contains(String("kafka://u:"+secret+"@h:1/t "+"x?sig="+secret), secret) {
			t.Errorf("%q survives", secret)
		}
	}
}
