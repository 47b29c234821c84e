// Package embed runs a NATS server with JetStream inside the evalflow
// process, for `evalflow run -workers N`: the run and its worker processes
// then need no cluster. It is the only package that imports the server, so
// commands that do not start one do not pay for its initialisation.
package embed

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Server is a running embedded server.
type Server struct {
	s *server.Server
	// URL is where clients connect (loopback, a free port).
	URL string
}

// Start starts a server listening on 127.0.0.1 (a free port) that keeps its
// JetStream state in storeDir, so a run killed and started again finds its
// streams. Clients must present token. The caller owns the server: Shutdown
// stops it.
func Start(storeDir, token string) (*Server, error) {
	opts := &server.Options{
		ServerName:         "evalflow-embedded",
		Host:               "127.0.0.1",
		Port:               server.RANDOM_PORT,
		JetStream:          true,
		StoreDir:           storeDir,
		Authorization:      token,
		NoLog:              true,
		NoSigs:             true,
		MaxPayload:         8 << 20,
		JetStreamMaxMemory: 64 << 20,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("embedded NATS server: not ready after 30 s")
	}
	addr, ok := s.Addr().(*net.TCPAddr)
	if !ok {
		s.Shutdown()
		return nil, fmt.Errorf("embedded NATS server: no TCP address")
	}
	return &Server{s: s, URL: "nats://127.0.0.1:" + strconv.Itoa(addr.Port)}, nil
}

// Shutdown stops the server and waits for it.
func (s *Server) Shutdown() {
	s.s.Shutdown()
	s.s.WaitForShutdown()
}
