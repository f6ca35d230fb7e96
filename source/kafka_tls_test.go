package source_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// selfSigned returns a certificate for 127.0.0.1 and its PEM file.
func selfSigned(t *testing.T) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kafka"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, ca
}

// TestKafkaOverTLSWithSASL: a broker that speaks only TLS and asks for
// SCRAM credentials is read whole, the group's connections and each
// partition's fetch connection alike.
func TestKafkaOverTLSWithSASL(t *testing.T) {
	cert, ca := selfSigned(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "cdc"), kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}}),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "exporter", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pool := x509.NewCertPool()
	pemBytes, _ := os.ReadFile(ca)
	pool.AppendCertsFromPEM(pemBytes)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DialTLSConfig(&tls.Config{RootCAs: pool}),
		kgo.SASL(scram.Auth{User: "exporter", Pass: "s3cret"}.AsSha512Mechanism()), kgo.DefaultProduceTopic("cdc"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n = 300
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Key: fmt.Appendf(nil, "k%d", i%7), Value: fmt.Appendf(nil, `{"n":%d}`, i)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	dialer, err := source.NewDialer(source.DialerConfig{TLS: true, TLSCA: ca, SASL: "scram-sha-512", Username: "exporter", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	got := drainAll(t, source.KafkaConfig{Brokers: c.ListenAddrs(), Topics: []string{"cdc"}, Group: "g-tls", Once: true,
		MaxWait: 100 * time.Millisecond, Dialer: dialer})
	seen := map[string]bool{}
	for _, m := range got {
		seen[string(m.Value)] = true
	}
	if len(got) != n || len(seen) != n {
		t.Fatalf("read %d records, %d different; want the %d produced", len(got), len(seen), n)
	}
}
