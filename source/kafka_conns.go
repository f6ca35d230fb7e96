package source

import (
	"bufio"
	"context"
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

// dialer returns a copy of d that dials through c.
func (c *connCloser) dialer(d *kafka.Dialer) *kafka.Dialer {
	dial := d.DialFunc
	if dial == nil {
		// what kafka-go uses when DialFunc is nil, which it then ignores
		dial = (&net.Dialer{LocalAddr: d.LocalAddr, DualStack: d.DualStack, FallbackDelay: d.FallbackDelay, KeepAlive: d.KeepAlive}).DialContext
	}
	cp := *d
	cp.DialFunc = func(ctx context.Context, network, address string) (net.Conn, error) {
		conn, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
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
		return t, nil
	}
	return &cp
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
