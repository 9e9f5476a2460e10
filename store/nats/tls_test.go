package nats_test

import (
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
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	natsstore "github.com/troupe-dev/troupe/store/nats"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 to dir and
// returns the server's TLS config and the certificate's PEM file.
func selfSigned(t *testing.T, dir string) (*tls.Config, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "troupe test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}, caFile
}

// TestTLS: a server that requires TLS is reached with TLSCAFile, and
// refused, naming the URL, without the CA.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	cfg, caFile := selfSigned(t, dir)
	s, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true,
		TLS: true, TLSConfig: cfg, TLSTimeout: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(30 * time.Second) {
		t.Fatal("TLS server not ready")
	}
	url := fmt.Sprintf("tls://127.0.0.1:%d", s.Addr().(*net.TCPAddr).Port)
	st, err := natsstore.Open(t.Context(), url, natsstore.Options{TLSCAFile: caFile})
	if err != nil {
		t.Fatalf("Open(%s) with the CA error: %v", url, err)
	}
	defer st.Close()
	newCrew(t, st)
	if _, err := st.Teams().Get(t.Context(), "crew"); err != nil {
		t.Errorf("Get over TLS: %v", err)
	}
	if st2, err := natsstore.Open(t.Context(), url, natsstore.Options{ConnectTimeout: 5 * time.Second}); err == nil {
		st2.Close()
		t.Error("Open without the CA succeeded; want a certificate error")
	} else if !strings.Contains(err.Error(), url) {
		t.Errorf("Open without the CA error = %v; want it to name %s", err, url)
	}
}
