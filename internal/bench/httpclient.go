package bench

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// wireClient is the HTTP workload's load generator: one keep-alive
// HTTP/1.1 connection per client goroutine, each request written with one
// write and its answer read on the same goroutine (http.ReadResponse parses
// it), as wrk does. On the benchmark's two cores the client shares the CPU
// with serve and PostgreSQL, so what it costs is taken from what it
// measures: BenchmarkLoadGenerator puts a loopback round trip at about
// 16 us with it against 20-22 us with net/http's client (a read and a
// write goroutine per connection, a request and its header map per call).
// Serve is the real handler chain on a real socket either way.
type wireClient struct {
	addr    string
	timeout time.Duration
	conn    net.Conn
	br      *bufio.Reader
	buf     []byte
	// retryAfter is the last answer's Retry-After (0: none).
	retryAfter time.Duration
}

func newWireClient(addr string, timeout time.Duration) *wireClient {
	return &wireClient{addr: addr, timeout: timeout}
}

// do sends one request (header lines as "Name: value") and returns the
// status and how many body bytes came back. A connection the server closed
// (Connection: close) is opened again for the next request; a request is
// never sent twice, so a failed store is an error, not a duplicate.
func (c *wireClient) do(method, path string, body []byte, headers ...string) (status, n int, err error) {
	if c.conn == nil {
		if c.conn, err = net.DialTimeout("tcp", c.addr, c.timeout); err != nil {
			return 0, 0, err
		}
		c.br = bufio.NewReaderSize(c.conn, 32<<10)
	}
	return c.roundTrip(method, path, body, headers)
}

func (c *wireClient) roundTrip(method, path string, body []byte, headers []string) (int, int, error) {
	b := append(c.buf[:0], method...)
	b = append(b, ' ')
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, c.addr...)
	b = append(b, "\r\n"...)
	for _, h := range headers {
		b = append(b, h...)
		b = append(b, "\r\n"...)
	}
	if body != nil {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, body...)
	c.buf = b
	if err := c.conn.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		c.close()
		return 0, 0, err
	}
	if _, err := c.conn.Write(b); err != nil {
		c.close()
		return 0, 0, err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		c.close()
		return 0, 0, err
	}
	n, err := io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		c.close()
		return 0, 0, err
	}
	if resp.Close {
		c.close()
	}
	c.retryAfter = 0
	if v, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		c.retryAfter = time.Duration(v) * time.Second
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, int(n), fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	return resp.StatusCode, int(n), nil
}

func (c *wireClient) close() {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
}
