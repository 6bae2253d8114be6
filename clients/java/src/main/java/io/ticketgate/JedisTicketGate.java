package io.ticketgate;

import redis.clients.jedis.UnifiedJedis;

/** Builds a {@link TicketGate} over Jedis, standalone or cluster. */
public final class JedisTicketGate {
  private JedisTicketGate() {}

  /** Over Jedis: {@code JedisPooled}, {@code JedisCluster} or any {@code UnifiedJedis}. */
  public static TicketGate create(UnifiedJedis jedis) {
    return new TicketGate(new JedisTransport(jedis));
  }
}
