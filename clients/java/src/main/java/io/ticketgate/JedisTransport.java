package io.ticketgate;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.commands.ProtocolCommand;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.util.KeyValue;

/**
 * Commands over Jedis ({@code JedisPooled}, {@code JedisCluster}, {@code RedisClient}, ...). The
 * event is passed as the command's sample key, so a cluster client sends it to the event's slot;
 * Jedis follows MOVED and renews its slot cache after a reshard.
 */
final class JedisTransport implements Transport {
  private static final Map<TicketCommand, ProtocolCommand> COMMANDS = commands();

  private final UnifiedJedis jedis;

  JedisTransport(UnifiedJedis jedis) {
    this.jedis = jedis;
  }

  @Override
  public Object send(TicketCommand command, String event, List<String> args) {
    byte[] key = event.getBytes(StandardCharsets.UTF_8);
    byte[][] wire = new byte[args.size() + 1][];
    wire[0] = key;
    for (int i = 0; i < args.size(); i++) {
      wire[i + 1] = args.get(i).getBytes(StandardCharsets.UTF_8);
    }
    try {
      return normalise(jedis.sendCommand(key, COMMANDS.get(command), wire));
    } catch (JedisDataException e) {
      throw TicketGateException.fromReply(e.getMessage());
    }
  }

  /** Jedis replies (byte[], Long, List, RESP3 maps as lists of KeyValue) as Transport values. */
  static Object normalise(Object reply) {
    if (reply instanceof byte[] bytes) {
      return new String(bytes, StandardCharsets.UTF_8);
    }
    if (reply instanceof List<?> list) {
      if (!list.isEmpty() && list.stream().allMatch(KeyValue.class::isInstance)) {
        Map<Object, Object> map = new LinkedHashMap<>();
        for (Object entry : list) {
          KeyValue<?, ?> pair = (KeyValue<?, ?>) entry;
          map.put(normalise(pair.getKey()), normalise(pair.getValue()));
        }
        return map;
      }
      List<Object> out = new ArrayList<>(list.size());
      list.forEach(item -> out.add(normalise(item)));
      return out;
    }
    return reply;
  }

  private static Map<TicketCommand, ProtocolCommand> commands() {
    Map<TicketCommand, ProtocolCommand> map = new EnumMap<>(TicketCommand.class);
    for (TicketCommand command : TicketCommand.values()) {
      map.put(command, command::wireName);
    }
    return map;
  }

  /** The application owns the Jedis client: nothing to release here. */
  @Override
  public void close() {}
}
