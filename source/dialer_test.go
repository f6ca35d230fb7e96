package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewDialer(t *testing.T) {
	d, err := NewDialer(DialerConfig{})
	if err != nil || d.TLS != nil || d.SASLMechanism != nil {
		t.Errorf("zero config: %+v, %v", d, err)
	}
	d, err = NewDialer(DialerConfig{TLS: true, SASL: "scram-sha-512", Username: "u", Password: "p"})
	if err != nil || d.TLS == nil || d.SASLMechanism == nil || d.SASLMechanism.Name() != "SCRAM-SHA-512" {
		t.Errorf("TLS and SCRAM: %+v, %v", d, err)
	}
	if _, err := NewDialer(DialerConfig{SASL: "plain", Username: "u"}); err == nil || !strings.Contains(err.Error(), "--kafka-password") {
		t.Errorf("SASL without a password: %v", err)
	}
	if _, err := NewDialer(DialerConfig{Username: "u", Password: "p"}); err == nil || !strings.Contains(err.Error(), "--kafka-sasl is none") {
		t.Errorf("a user without SASL: %v", err)
	}
	if d, err := NewDialer(DialerConfig{Password: "p"}); err != nil || d.SASLMechanism != nil {
		t.Errorf("a password alone (a shared Secret's) without SASL: %+v, %v", d, err)
	}
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o644)
	if _, err := NewDialer(DialerConfig{TLSCA: notPEM}); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a CA file without certificates: %v", err)
	}
}
