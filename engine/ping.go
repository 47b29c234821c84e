package engine

import (
	"context"
	"net"
	"net/url"
	"time"
)

// Pinger is implemented by engines that can tell, before any item runs,
// whether they can serve queries at all: a server that answers, an
// embedded engine whose runtime is installed. The run fails before its
// first item when Ping fails (exit 2), with the error's fix.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Dial checks that the host of an http(s) URL accepts a TCP connection
// (nothing is sent): a server that is down fails before any item.
func Dial(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
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
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(dctx, "tcp", host)
	if err != nil {
		return err
	}
	return c.Close()
}
