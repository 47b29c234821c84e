package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/evalflow/evalflow/cluster/clustertest"
)

// startServer runs a server of opts (JetStream on, loopback, a free port)
// in the test process and returns its port.
func startServer(t *testing.T, opts *server.Options) int {
	return clustertest.Port(clustertest.StartServer(t, opts))
}

// usable checks that a connection of o works, JetStream included (the
// run's buckets are created).
func usable(o ConnOptions) error {
	nc, err := Connect(o)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _, _, err = buckets(ctx, js, 0)
	return err
}

// TestConnectTLSAndPassword: a server that requires TLS with client
// certificates (mutual TLS) and a user and password; Connect gets in with
// the CA, the client certificate and the password, and not without any of
// them (nor with the password in the URL redacted from its error).
func TestConnectTLSAndPassword(t *testing.T) {
	dir := t.TempDir()
	if err := clustertest.WritePKI(dir); err != nil {
		t.Fatal(err)
	}
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: filepath.Join(dir, "server.pem"), KeyFile: filepath.Join(dir, "server-key.pem"),
		CaFile: filepath.Join(dir, "ca.pem"), Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	port := startServer(t, &server.Options{TLSConfig: tc, TLS: true, TLSVerify: true, TLSTimeout: 5,
		Users: []*server.User{{Username: "evalflow", Password: "s3cret"}}})
	good := ConnOptions{URL: fmt.Sprintf("tls://127.0.0.1:%d", port), User: "evalflow", Password: "s3cret",
		TLSCA: filepath.Join(dir, "ca.pem"), TLSCert: filepath.Join(dir, "client.pem"), TLSKey: filepath.Join(dir, "client-key.pem")}
	if err := usable(good); err != nil {
		t.Fatalf("TLS, client certificate and password: %v", err)
	}
	inURL := good
	inURL.URL, inURL.User, inURL.Password = fmt.Sprintf("tls://evalflow:s3cret@127.0.0.1:%d", port), "", ""
	if err := usable(inURL); err != nil {
		t.Fatalf("password in the URL: %v", err)
	}
	for name, o := range map[string]func(*ConnOptions){
		"no CA":                 func(o *ConnOptions) { o.TLSCA = "" },
		"no client certificate": func(o *ConnOptions) { o.TLSCert, o.TLSKey = "", "" },
		"wrong password":        func(o *ConnOptions) { o.Password = "guess" },
	} {
		bad := good
		o(&bad)
		if err := usable(bad); err == nil {
			t.Errorf("%s: connected", name)
		}
	}
	bad := inURL
	bad.URL = strings.Replace(bad.URL, "s3cret", "guess", 1)
	if err := usable(bad); err == nil || strings.Contains(err.Error(), "guess") {
		t.Errorf("wrong password in the URL: %v (the password must not be shown)", err)
	}
}

// TestConnectNKey: a server that knows a user by nkey; Connect signs in
// with the seed file.
func TestConnectNKey(t *testing.T) {
	dir := t.TempDir()
	kp, _ := nkeys.CreateUser()
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	seedFile := filepath.Join(dir, "user.nk")
	os.WriteFile(seedFile, seed, 0o600)
	port := startServer(t, &server.Options{Nkeys: []*server.NkeyUser{{Nkey: pub}}})
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	if err := usable(ConnOptions{URL: url, NKey: seedFile}); err != nil {
		t.Fatalf("nkey: %v", err)
	}
	if err := usable(ConnOptions{URL: url}); err == nil {
		t.Errorf("connected without the nkey")
	}
}

// TestConnectCreds: a server in operator mode (JWT accounts, a memory
// resolver) with JetStream enabled for an account; Connect signs in with
// a user's creds file and the run's buckets are created.
func TestConnectCreds(t *testing.T) {
	dir := t.TempDir()
	okp, _ := nkeys.CreateOperator()
	opub, _ := okp.PublicKey()
	oc := jwt.NewOperatorClaims(opub)
	oc.Name = "evalflow-test"
	sysKP, _ := nkeys.CreateAccount()
	sysPub, _ := sysKP.PublicKey()
	oc.SystemAccount = sysPub
	ojwt, err := oc.Encode(okp)
	if err != nil {
		t.Fatal(err)
	}
	sc := jwt.NewAccountClaims(sysPub)
	sc.Name = "SYS"
	sysJWT, err := sc.Encode(okp)
	if err != nil {
		t.Fatal(err)
	}
	akp, _ := nkeys.CreateAccount()
	apub, _ := akp.PublicKey()
	ac := jwt.NewAccountClaims(apub)
	ac.Name = "evalflow"
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	ajwt, err := ac.Encode(okp)
	if err != nil {
		t.Fatal(err)
	}
	ukp, _ := nkeys.CreateUser()
	upub, _ := ukp.PublicKey()
	uc := jwt.NewUserClaims(upub)
	uc.IssuerAccount = apub
	ujwt, err := uc.Encode(akp)
	if err != nil {
		t.Fatal(err)
	}
	useed, _ := ukp.Seed()
	creds, err := jwt.FormatUserConfig(ujwt, useed)
	if err != nil {
		t.Fatal(err)
	}
	credsFile := filepath.Join(dir, "evalflow.creds")
	os.WriteFile(credsFile, creds, 0o600)
	conf := filepath.Join(dir, "server.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("operator: %s\nsystem_account: %s\nresolver: MEMORY\nresolver_preload: {\n  %s: %s\n  %s: %s\n}\n",
		ojwt, sysPub, sysPub, sysJWT, apub, ajwt)), 0o600)
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	port := startServer(t, opts)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	if err := usable(ConnOptions{URL: url, Creds: credsFile}); err != nil {
		t.Fatalf("creds: %v", err)
	}
	if err := usable(ConnOptions{URL: url}); err == nil {
		t.Errorf("connected without credentials")
	}
}
