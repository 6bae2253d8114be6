package io.ticketgate;

import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.CommandOutput;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds any reply, nested or not, into the normalised values of {@link Transport}: Long, String,
 * List, Map (RESP3 maps, in server order) or null. Lettuce calls {@code multi*} when an aggregate
 * starts and {@code complete(depth)} with the number of aggregates still open after each element.
 */
final class LettuceReplyOutput extends CommandOutput<String, String, Object> {
  private final Deque<Aggregate> open = new ArrayDeque<>();

  LettuceReplyOutput() {
    super(StringCodec.UTF8, null);
  }

  @Override
  public void set(ByteBuffer bytes) {
    value(bytes == null ? null : StandardCharsets.UTF_8.decode(bytes).toString());
  }

  @Override
  public void setSingle(ByteBuffer bytes) {
    set(bytes);
  }

  @Override
  public void setBigNumber(ByteBuffer bytes) {
    set(bytes);
  }

  @Override
  public void set(long integer) {
    value(integer);
  }

  @Override
  public void set(double number) {
    value(number);
  }

  @Override
  public void set(boolean bool) {
    value(bool);
  }

  @Override
  public void multi(int count) {
    start(new Aggregate(new ArrayList<>(Math.max(count, 0))));
  }

  @Override
  public void multiArray(int count) {
    multi(count);
  }

  @Override
  public void multiSet(int count) {
    multi(count);
  }

  @Override
  public void multiPush(int count) {
    multi(count);
  }

  @Override
  public void multiMap(int count) {
    start(new Aggregate(new LinkedHashMap<>()));
  }

  @Override
  public void complete(int depth) {
    while (open.size() > depth) {
      open.pop();
    }
  }

  private void start(Aggregate aggregate) {
    value(aggregate.value());
    open.push(aggregate);
  }

  private void value(Object value) {
    if (open.isEmpty()) {
      output = value;
    } else {
      open.peek().add(value);
    }
  }

  /** An array or a map being filled; a map takes its elements as name, value, name, value. */
  private static final class Aggregate {
    private final Object value;
    private Object pendingName;
    private boolean expectingValue;

    Aggregate(Object value) {
      this.value = value;
    }

    Object value() {
      return value;
    }

    @SuppressWarnings("unchecked")
    void add(Object element) {
      if (value instanceof List<?> list) {
        ((List<Object>) list).add(element);
      } else if (expectingValue) {
        ((Map<Object, Object>) value).put(pendingName, element);
        expectingValue = false;
      } else {
        pendingName = element;
        expectingValue = true;
      }
    }
  }
}
