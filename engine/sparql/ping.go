package sparql

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os/exec"
)

// Ping checks what the engine needs before any item: an endpoint that
// accepts a connection, or the embedded Oxigraph's Node.js and npm
// package (installed by make deps).
func (e *Executor) Ping(ctx context.Context) error {
	if e.endpoint != "" {
		u, err := url.Parse(e.endpoint)
		if err != nil {
			return err
		}
		host := u.Host
		if u.Port() == "" {
			port := "80"
			if u.Scheme == "https" {
				port = "443"
			}
			host = net.JoinHostPort(u.Hostname(), port)
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", host)
		if err != nil {
			return fmt.Errorf("the SPARQL endpoint %s cannot be reached: %v", e.endpoint, err)
		}
		return c.Close()
	}
	if e.ox != nil {
		if _, err := lookupOxigraphDir(e.ox.dir); err != nil {
			return err
		}
		if _, err := exec.LookPath(e.ox.node); err != nil {
			return fmt.Errorf("sparql: the embedded Oxigraph engine needs Node.js 18 or later (%v); run make deps", err)
		}
	}
	return nil
}
