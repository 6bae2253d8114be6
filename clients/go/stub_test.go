// A loopback RESP server for the vector tests: it answers the connection
// handshake (HELLO, CLIENT, PING) and replies to every ticket.* command with
// canned bytes, recording the command, so vectors run through go-redis's own
// reply parser.

package ticketgate

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const hello3 = "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n" +
	"$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:1\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n" +
	"$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"

const hello2 = "*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n" +
	"$5\r\nproto\r\n:2\r\n$2\r\nid\r\n:1\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n" +
	"$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"

type stubServer struct {
	listener net.Listener
	mu       sync.Mutex
	reply    string
	received []string
}

func startStub(t *testing.T) *stubServer {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stubServer{listener: listener, reply: "+OK\r\n"}
	t.Cleanup(func() { _ = listener.Close() })
	go s.acceptAll()
	return s
}

func (s *stubServer) addr() string { return s.listener.Addr().String() }

// replyWith sets the bytes the next ticket command gets.
func (s *stubServer) replyWith(raw string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reply, s.received = raw, nil
}

// lastCommand is the last ticket command received.
func (s *stubServer) lastCommand() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received
}

func (s *stubServer) acceptAll() {
	for {
		conn, err := s.listener.Accept()
		if err != nil {
			return
		}
		go s.serve(conn)
	}
}

func (s *stubServer) serve(conn net.Conn) {
	defer conn.Close()
	in := bufio.NewReader(conn)
	for {
		argv, err := readCommand(in)
		if err != nil {
			return
		}
		if _, err := io.WriteString(conn, s.answer(argv)); err != nil {
			return
		}
	}
}

func (s *stubServer) answer(argv []string) string {
	name := strings.ToLower(argv[0])
	switch {
	case strings.HasPrefix(name, "ticket."):
		s.mu.Lock()
		defer s.mu.Unlock()
		s.received = argv
		return s.reply
	case name == "hello" && len(argv) > 1 && argv[1] == "3":
		return hello3
	case name == "hello":
		return hello2
	case name == "ping":
		return "+PONG\r\n"
	}
	return "+OK\r\n"
}

// readCommand reads one command: an array of bulk strings.
func readCommand(in *bufio.Reader) ([]string, error) {
	count, err := readLength(in, '*')
	if err != nil {
		return nil, err
	}
	argv := make([]string, count)
	for i := range argv {
		n, err := readLength(in, '$')
		if err != nil {
			return nil, err
		}
		data := make([]byte, n+2)
		if _, err := io.ReadFull(in, data); err != nil {
			return nil, err
		}
		argv[i] = string(data[:n])
	}
	return argv, nil
}

func readLength(in *bufio.Reader, prefix byte) (int, error) {
	line, err := in.ReadString('\n')
	if err != nil {
		return 0, err
	}
	line = strings.TrimRight(line, "\r\n")
	if len(line) < 2 || line[0] != prefix {
		return 0, fmt.Errorf("stub: unexpected line %q", line)
	}
	return strconv.Atoi(line[1:])
}
