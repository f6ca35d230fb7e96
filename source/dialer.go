package source

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// DialerConfig says how to connect to the Kafka brokers: TLS and SASL.
// The zero value is plain TCP without authentication.
type DialerConfig struct {
	TLS         bool   // connect over TLS (implied by TLSCA)
	TLSCA       string // PEM file of CAs to trust; empty: the system's
	TLSInsecure bool   // do not verify the brokers' certificates (tests only)
	// SASL is the mechanism: "" or "none", "plain", "scram-sha-256" or
	// "scram-sha-512"; any but none needs Username and Password.
	SASL     string
	Username string
	Password string
}

// NewDialer builds the dialer cfg describes (10s connect timeout). Errors
// name the setting at fault by its flag.
func NewDialer(cfg DialerConfig) (*kafka.Dialer, error) {
	d := &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true}
	if cfg.TLS || cfg.TLSCA != "" {
		tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.TLSInsecure}
		if cfg.TLSCA != "" {
			pem, err := os.ReadFile(cfg.TLSCA)
			if err != nil {
				return nil, fmt.Errorf("--kafka-tls-ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--kafka-tls-ca %s holds no PEM certificate", cfg.TLSCA)
			}
			tc.RootCAs = pool
		}
		d.TLS = tc
	}
	switch cfg.SASL {
	case "", "none":
		if cfg.Username != "" {
			// Ignored, it would leave the brokers reached without the
			// authentication its setter meant. A password alone may come
			// from a Secret shared with exporters that do use SASL.
			return nil, errors.New("--kafka-username is set but --kafka-sasl is none, so no credentials would be sent: set --kafka-sasl to the brokers' mechanism (plain, scram-sha-256 or scram-sha-512), or unset --kafka-username")
		}
		return d, nil
	case "plain", "scram-sha-256", "scram-sha-512":
	default:
		return nil, fmt.Errorf("--kafka-sasl %q is not none, plain, scram-sha-256 or scram-sha-512", cfg.SASL)
	}
	if cfg.Username == "" || cfg.Password == "" {
		return nil, fmt.Errorf("--kafka-sasl %s needs --kafka-username and --kafka-password", cfg.SASL)
	}
	switch cfg.SASL {
	case "plain":
		d.SASLMechanism = plain.Mechanism{Username: cfg.Username, Password: cfg.Password}
	default:
		algo := scram.SHA256
		if cfg.SASL == "scram-sha-512" {
			algo = scram.SHA512
		}
		m, err := scram.Mechanism(algo, cfg.Username, cfg.Password)
		if err != nil {
			return nil, fmt.Errorf("--kafka-sasl: %w", err)
		}
		d.SASLMechanism = m
	}
	return d, nil
}
