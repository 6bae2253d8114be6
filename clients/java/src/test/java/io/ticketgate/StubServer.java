package io.ticketgate;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A loopback server speaking just enough RESP for a real client to connect (HELLO, CLIENT, PING
 * answered) and replying to every {@code ticket.*} command with canned bytes, recording the command
 * it received. Lets the vectors run through each client's own reply parser.
 */
final class StubServer implements AutoCloseable {
  private static final String HELLO3 =
      "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n"
          + "$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:1\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n"
          + "$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n";
  private static final String HELLO2 =
      "*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n"
          + "$5\r\nproto\r\n:2\r\n$2\r\nid\r\n:1\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n"
          + "$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n";

  private final ServerSocket socket;
  private volatile byte[] reply = "+OK\r\n".getBytes(StandardCharsets.UTF_8);
  private volatile List<String> received = List.of();

  StubServer() throws IOException {
    socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::acceptAll, "stub-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  int port() {
    return socket.getLocalPort();
  }

  /** The bytes the next ticket command gets. */
  void replyWith(String raw) {
    reply = raw.getBytes(StandardCharsets.UTF_8);
    received = List.of();
  }

  /** The last ticket command received. */
  List<String> received() {
    return received;
  }

  private void acceptAll() {
    while (!socket.isClosed()) {
      try {
        Socket client = socket.accept();
        Thread serve = new Thread(() -> serve(client), "stub-conn");
        serve.setDaemon(true);
        serve.start();
      } catch (IOException closed) {
        return;
      }
    }
  }

  private void serve(Socket client) {
    try (client) {
      InputStream in = new BufferedInputStream(client.getInputStream());
      OutputStream out = client.getOutputStream();
      for (List<String> argv = readCommand(in); argv != null; argv = readCommand(in)) {
        out.write(answer(argv));
        out.flush();
      }
    } catch (IOException gone) {
      // the client hung up
    }
  }

  private byte[] answer(List<String> argv) {
    String name = argv.get(0).toLowerCase(Locale.ROOT);
    if (name.startsWith("ticket.")) {
      received = List.copyOf(argv);
      return reply;
    }
    String canned =
        switch (name) {
          case "hello" -> argv.size() > 1 && argv.get(1).equals("3") ? HELLO3 : HELLO2;
          case "ping" -> "+PONG\r\n";
          default -> "+OK\r\n";
        };
    return canned.getBytes(StandardCharsets.UTF_8);
  }

  /** One command (an array of bulk strings), or null at end of stream. */
  private static List<String> readCommand(InputStream in) throws IOException {
    String header = readLine(in);
    if (header == null) {
      return null;
    }
    int count = Integer.parseInt(header.substring(1));
    List<String> argv = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      int length = Integer.parseInt(readLine(in).substring(1));
      byte[] data = in.readNBytes(length + 2);
      argv.add(new String(data, 0, length, StandardCharsets.UTF_8));
    }
    return argv;
  }

  private static String readLine(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    for (int c = in.read(); c != '\n'; c = in.read()) {
      if (c < 0) {
        return null;
      }
      if (c != '\r') {
        line.append((char) c);
      }
    }
    return line.toString();
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
