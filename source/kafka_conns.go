package source

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"sync"

	"github.com/segmentio/kafka-go"
)

// connCloser hands out a copy of a kafka.Dialer whose connections it can
// cut. kafka.Reader.Close waits for the fetch in flight, and a fetch at
// the end of a partition waits MaxWait (500ms by default) on the broker:
// every generation end, rebalance and Close paid that. Closing the sockets
// first makes the fetch fail at once. Only consume's exit path closes
// them, after its last FetchMessage, so that error never reaches Next.
type connCloser struct {
	mu     sync.Mutex
	conns  map[*trackedConn]struct{}
	closed bool
	// last is the connection dialed last: the one under the kafka.Conn
	// that the last dial returned (see lastDialed).
	last *trackedConn
}

type trackedConn struct {
	net.Conn
	owner *connCloser
	// in reads the socket in large reads: kafka-go reads a fetch response
	// through a bufio.Reader of 4 KiB, a system call for every dozen
	// records, which cost the Kafka source more CPU than the records'
	// copies.
	in *bufio.Reader
}

// connReadBytes is the size of a fetch connection's read buffer.
const connReadBytes = 64 << 10

func (c *trackedConn) Read(p []byte) (int, error) { return c.in.Read(p) }

func (c *trackedConn) Close() error {
	c.owner.mu.Lock()
	delete(c.owner.conns, c)
	c.owner.mu.Unlock()
	return c.Conn.Close()
}

// dialer returns a copy of d that dials through c. TLS, if d has it, is
// set up here rather than by kafka-go, so that the connection c tracks is
// the one the Kafka protocol runs on (partitionFetcher writes its
// fetches to it).
func (c *connCloser) dialer(d *kafka.Dialer) *kafka.Dialer {
	dial := d.DialFunc
	if dial == nil {
		// what kafka-go uses when DialFunc is nil, which it then ignores
		dial = (&net.Dialer{LocalAddr: d.LocalAddr, DualStack: d.DualStack, FallbackDelay: d.FallbackDelay, KeepAlive: d.KeepAlive}).DialContext
	}
	tlsConfig := d.TLS
	cp := *d
	cp.TLS = nil
	cp.DialFunc = func(ctx context.Context, network, address string) (net.Conn, error) {
		conn, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		if tlsConfig != nil {
			if conn, err = handshakeTLS(ctx, conn, tlsConfig, address); err != nil {
				return nil, err
			}
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			conn.Close()
			return nil, net.ErrClosed
		}
		t := &trackedConn{Conn: conn, owner: c, in: bufio.NewReaderSize(conn, connReadBytes)}
		if c.conns == nil {
			c.conns = map[*trackedConn]struct{}{}
		}
		c.conns[t] = struct{}{}
		c.last = t
		return t, nil
	}
	return &cp
}

// lastDialed returns the connection dialed last.
func (c *connCloser) lastDialed() *trackedConn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// handshakeTLS runs the TLS handshake on conn as kafka-go's dialer does,
// the server's name taken from the address when config has none.
func handshakeTLS(ctx context.Context, conn net.Conn, config *tls.Config, address string) (net.Conn, error) {
	if config.ServerName == "" {
		config = config.Clone()
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			host = address
		}
		config.ServerName = host
	}
	t := tls.Client(conn, config)
	if err := t.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return t, nil
}

// close cuts every connection made so far and refuses new ones.
func (c *connCloser) close() {
	c.mu.Lock()
	conns := c.conns
	c.conns, c.closed = nil, true
	c.mu.Unlock()
	for t := range conns {
		t.Conn.Close()
	}
}
