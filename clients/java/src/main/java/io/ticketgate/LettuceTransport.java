package io.ticketgate;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.ProtocolKeyword;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Commands over a Lettuce connection, standalone or cluster. The event is added to the arguments as
 * a key, so a cluster connection computes the event's slot and writes to its master directly;
 * Lettuce follows MOVED after a reshard (and refreshes its topology when adaptive refresh is on).
 */
final class LettuceTransport implements Transport {
  private static final Map<TicketCommand, ProtocolKeyword> KEYWORDS = keywords();

  private final RedisClusterAsyncCommands<?, ?> commands;
  private final Duration timeout;
  private final StatefulConnection<?, ?> owned;

  /**
   * @param connection the connection commands go through
   * @param commands its async commands (standalone or cluster)
   * @param owned whether closing the transport closes the connection
   */
  LettuceTransport(
      StatefulConnection<?, ?> connection,
      RedisClusterAsyncCommands<?, ?> commands,
      boolean owned) {
    this.commands = commands;
    this.timeout = connection.getTimeout();
    this.owned = owned ? connection : null;
  }

  @Override
  public Object send(TicketCommand command, String event, List<String> args) {
    CommandArgs<String, String> wire = new CommandArgs<>(StringCodec.UTF8).addKey(event);
    for (String arg : args) {
      wire.add(arg);
    }
    RedisFuture<Object> reply = dispatch(KEYWORDS.get(command), wire);
    try {
      return LettuceFutures.awaitOrCancel(reply, timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RedisCommandExecutionException e) {
      throw TicketGateException.fromReply(e.getMessage());
    }
  }

  /** Dispatches with the connection's own generic types: our args carry their own codec. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private RedisFuture<Object> dispatch(ProtocolKeyword keyword, CommandArgs<String, String> args) {
    CommandOutput output = new LettuceReplyOutput();
    return ((RedisClusterAsyncCommands) commands).dispatch(keyword, output, args);
  }

  @Override
  public void close() {
    if (owned != null) {
      owned.close();
    }
  }

  private static Map<TicketCommand, ProtocolKeyword> keywords() {
    Map<TicketCommand, ProtocolKeyword> map = new EnumMap<>(TicketCommand.class);
    for (TicketCommand command : TicketCommand.values()) {
      map.put(command, new Keyword(command));
    }
    return map;
  }

  /** A module command's name for Lettuce. */
  private record Keyword(TicketCommand command) implements ProtocolKeyword {
    @Override
    public byte[] getBytes() {
      return command.wireName();
    }

    @Override
    public String name() {
      return command.wireString();
    }

    @Override
    public String toString() {
      return command.wireString();
    }
  }
}
