package io.ticketgate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisURI;
import io.lettuce.core.protocol.ProtocolVersion;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisProtocol;

/**
 * Every vector of clients/vectors.json through every backend (Lettuce and Jedis, RESP2 and RESP3):
 * the wrapper must send the vector's command and turn the recorded reply into its typed value.
 */
class VectorsTest {
  private static StubServer stub;
  private static final List<AutoCloseable> OPENED = new ArrayList<>();

  @BeforeAll
  static void start() throws IOException {
    stub = new StubServer();
  }

  @AfterAll
  static void stop() throws Exception {
    for (AutoCloseable c : OPENED) {
      c.close();
    }
    stub.close();
  }

  @TestFactory
  Stream<DynamicTest> lettuceResp2() throws IOException {
    return run("lettuce resp2", 2, VectorsTest::lettuce);
  }

  @TestFactory
  Stream<DynamicTest> lettuceResp3() throws IOException {
    return run("lettuce resp3", 3, VectorsTest::lettuce);
  }

  @TestFactory
  Stream<DynamicTest> jedisResp2() throws IOException {
    return run("jedis resp2", 2, VectorsTest::jedis);
  }

  @TestFactory
  Stream<DynamicTest> jedisResp3() throws IOException {
    return run("jedis resp3", 3, VectorsTest::jedis);
  }

  /** The vectors no wrapper method sends: their error line alone must map to the right type. */
  @TestFactory
  Stream<DynamicTest> errorLines() throws IOException {
    return Vectors.load().vectors().stream()
        .filter(v -> v.expect().get("kind").getAsString().equals("error"))
        .map(
            v ->
                DynamicTest.dynamicTest(
                    v.name(),
                    () -> {
                      String line = v.resp2().substring(1, v.resp2().length() - 2);
                      assertError(v.expect(), TicketGateException.fromReply(line));
                    }));
  }

  private static Stream<DynamicTest> run(
      String label, int protocol, Function<Integer, TicketGate> open) throws IOException {
    Vectors vectors = Vectors.load();
    TicketGate gate = open.apply(protocol);
    return vectors.vectors().stream()
        .filter(v -> v.call() != null)
        .map(v -> DynamicTest.dynamicTest(label + ": " + v.name(), () -> check(gate, protocol, v)));
  }

  private static void check(TicketGate gate, int protocol, Vectors.Vector v) {
    stub.replyWith(v.raw(protocol));
    JsonObject expect = v.expect();
    if (expect.get("kind").getAsString().equals("error")) {
      TicketGateException e =
          assertThrows(TicketGateException.class, () -> Calls.run(gate, v.call()));
      assertError(expect, e);
    } else {
      assertEquals(expect, Calls.run(gate, v.call()));
    }
    assertEquals(v.command(), stub.received(), "the command sent");
  }

  static void assertError(JsonObject expect, TicketGateException e) {
    String code = expect.get("code").getAsString();
    assertEquals(code, e.code());
    assertEquals(expect.get("message").getAsString(), e.serverMessage());
    Class<?> type = TicketGateException.fromReply(code + " x").getClass();
    assertEquals(type, e.getClass(), "the exception type for " + code);
    if (code.equals("SOLDOUT")) {
      assertEquals(SoldOutException.class, e.getClass());
    }
  }

  private static TicketGate lettuce(int protocol) {
    io.lettuce.core.RedisClient client =
        io.lettuce.core.RedisClient.create(RedisURI.create("127.0.0.1", stub.port()));
    ProtocolVersion version = protocol == 2 ? ProtocolVersion.RESP2 : ProtocolVersion.RESP3;
    client.setOptions(ClientOptions.builder().protocolVersion(version).build());
    OPENED.add(client::shutdown);
    TicketGate gate = LettuceTicketGate.create(client);
    OPENED.add(0, gate);
    return gate;
  }

  private static TicketGate jedis(int protocol) {
    RedisProtocol version = protocol == 2 ? RedisProtocol.RESP2 : RedisProtocol.RESP3;
    RedisClient jedis =
        RedisClient.builder()
            .hostAndPort(new HostAndPort("127.0.0.1", stub.port()))
            .clientConfig(DefaultJedisClientConfig.builder().protocol(version).build())
            .build();
    OPENED.add(jedis);
    return JedisTicketGate.create(jedis);
  }

  static JsonObject json(String text) {
    return JsonParser.parseString(text).getAsJsonObject();
  }
}
