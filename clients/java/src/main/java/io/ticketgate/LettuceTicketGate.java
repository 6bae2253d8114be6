package io.ticketgate;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;

/** Builds a {@link TicketGate} over Lettuce, standalone or cluster. */
public final class LettuceTicketGate {
  private LettuceTicketGate() {}

  /** Over a Lettuce standalone connection (any codec); closing the gate leaves it open. */
  public static TicketGate create(StatefulRedisConnection<?, ?> connection) {
    return new TicketGate(new LettuceTransport(connection, connection.async(), false));
  }

  /** Over a Lettuce cluster connection (any codec); closing the gate leaves it open. */
  public static TicketGate create(StatefulRedisClusterConnection<?, ?> connection) {
    return new TicketGate(new LettuceTransport(connection, connection.async(), false));
  }

  /** Opens a connection of its own from a Lettuce client; closing the gate closes it. */
  public static TicketGate create(RedisClient client) {
    StatefulRedisConnection<String, String> connection = client.connect();
    return new TicketGate(new LettuceTransport(connection, connection.async(), true));
  }

  /** Opens a cluster connection of its own from a Lettuce cluster client; closing closes it. */
  public static TicketGate create(RedisClusterClient client) {
    StatefulRedisClusterConnection<String, String> connection = client.connect();
    return new TicketGate(new LettuceTransport(connection, connection.async(), true));
  }
}
