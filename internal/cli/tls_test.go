package cli_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/cli"
)

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "remstore test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return certFile, keyFile, pool
}

// serve --tls-cert/--tls-key speaks HTTPS: a client that trusts the
// certificate gets answers with HSTS, plain HTTP to the same port gets
// none, and wrong TLS flags are usage errors found before any database.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key, pool := selfSigned(t, dir)

	noDB := map[string]string{"REMSTORE_DB": filepath.Join(dir, "missing", "x.db")}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", cert}, "--tls-cert and --tls-key go together"},
		{[]string{"--tls-cert", filepath.Join(dir, "nope.pem"), "--tls-key", key}, "--tls-cert/--tls-key: open " + filepath.Join(dir, "nope.pem")},
		{[]string{"--tls-cert", key, "--tls-key", cert}, "--tls-cert/--tls-key: tls: "},
		{[]string{"--trusted-proxy", "10.0.0.0/33"}, `--trusted-proxy: "10.0.0.0/33" is not an address or CIDR prefix`},
	} {
		r := run(t, noDB, "", append([]string{"serve", "--insecure-no-auth"}, c.args...)...)
		if r.code != cli.ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("serve %v: exit %d %q; want 2 with %q", c.args, r.code, r.stderr, c.want)
		}
	}

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	srv := serveCLI(t, map[string]string{"REMSTORE_DB": filepath.Join(dir, "tls.db")}, client.Get, "https",
		"--insecure-no-auth", "--tls-cert", cert, "--tls-key", key)
	addr := srv.addr
	resp, err := client.Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 || resp.Header.Get("Strict-Transport-Security") == "" {
		t.Errorf("https: %d %s, TLS %v, HSTS %q", resp.StatusCode, body, resp.TLS != nil, resp.Header.Get("Strict-Transport-Security"))
	}
	// A TLS 1.1 client is refused.
	old := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS11}}}
	if _, err := old.Get("https://" + addr + "/healthz"); err == nil {
		t.Error("a TLS 1.1 client was served")
	}
	// Plain HTTP on the TLS port is not served.
	if r, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/healthz"); err == nil {
		b, _ := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if r.StatusCode == 200 {
			t.Errorf("plain HTTP served: %s", b)
		}
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("serve exit %d: %s", code, srv.logs.String())
	}
	if !strings.Contains(srv.logs.String(), "listening on https://"+addr) {
		t.Errorf("logs: %s", srv.logs.String())
	}
}
