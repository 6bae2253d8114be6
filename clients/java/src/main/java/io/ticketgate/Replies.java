package io.ticketgate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Pure decoding of normalised replies (see {@link Transport}) into typed values. A RESP3 map and a
 * RESP2 flat array of name/value pairs decode alike.
 */
final class Replies {
  private Replies() {}

  /** An integer reply. */
  static long integer(Object reply) {
    if (reply instanceof Long n) {
      return n;
    }
    throw unexpected("an integer", reply);
  }

  /** An integer reply, or null. */
  static Optional<Long> optionalInteger(Object reply) {
    return reply == null ? Optional.empty() : Optional.of(integer(reply));
  }

  /** An array of ticket numbers. */
  static List<Long> tickets(Object reply) {
    if (!(reply instanceof List<?> items)) {
      throw unexpected("an array of tickets", reply);
    }
    List<Long> tickets = new ArrayList<>(items.size());
    for (Object item : items) {
      tickets.add(integer(item));
    }
    return List.copyOf(tickets);
  }

  /** {@code TICKET.STATUS}'s reply. */
  static Status status(Object reply) {
    Map<String, Object> f = fields(reply);
    return new Status(
        field(f, "total"),
        field(f, "remaining"),
        field(f, "claimed"),
        text(f, "status"),
        field(f, "opens_at"),
        field(f, "closes_at"),
        field(f, "unsynced"),
        field(f, "held"),
        field(f, "waiting"),
        optionalText(f, "incarnation"),
        optionalText(f, "draw"),
        optionalText(f, "seed"),
        optionalInteger(f.get("admit")),
        categories(f.get("categories")),
        optionalInteger(f.get("accessible")),
        optionalInteger(f.get("allocated")),
        optionalInteger(f.get("resale")).orElse(0L));
  }

  /** STATUS's {@code categories}: category, free seats, ... in layout order. */
  private static Optional<Map<String, Long>> categories(Object reply) {
    if (reply == null) {
      return Optional.empty();
    }
    Map<String, Long> out = new LinkedHashMap<>();
    fields(reply).forEach((name, free) -> out.put(name, integer(free)));
    return Optional.of(java.util.Collections.unmodifiableMap(out));
  }

  /** {@code TICKET.LAYOUT}'s reply: empty for an event that is not seated. */
  static Optional<Layout> layout(Object reply) {
    if (reply == null) {
      return Optional.empty();
    }
    if (reply instanceof String json) {
      return Optional.of(Layout.parse(json));
    }
    throw unexpected("the layout's JSON", reply);
  }

  /** {@code TICKET.SEATMAP}'s reply: empty for an event that is not seated. */
  static Optional<String> seatmap(Object reply) {
    if (reply == null || reply instanceof String) {
      return Optional.ofNullable((String) reply);
    }
    throw unexpected("the seat map", reply);
  }

  /** {@code TICKET.ALLOCATIONS}'s reply: {@code [name, free, claimed, release or nil]} each. */
  static List<Allocation> allocations(Object reply) {
    if (!(reply instanceof List<?> items)) {
      throw unexpected("an array of allocations", reply);
    }
    List<Allocation> out = new ArrayList<>(items.size());
    for (Object item : items) {
      if (!(item instanceof List<?> a) || a.size() != 4) {
        throw unexpected("[name, free, claimed, release]", item);
      }
      out.add(
          new Allocation(
              name(a.get(0)), integer(a.get(1)), integer(a.get(2)), optionalInteger(a.get(3))));
    }
    return List.copyOf(out);
  }

  /** {@code TICKET.ORDER}'s reply: empty when the user holds nothing. */
  static Optional<Order> order(Object reply) {
    if (reply == null) {
      return Optional.empty();
    }
    Map<String, Object> f = fields(reply);
    String state = text(f, "state");
    Order.State parsed;
    try {
      parsed = Order.State.valueOf(state.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw unexpected("an order state", state);
    }
    List<String> seats = new ArrayList<>();
    if (f.get("seats") instanceof List<?> names) {
      names.forEach(name -> seats.add(name(name)));
    }
    List<Long> gens = f.containsKey("gens") ? tickets(f.get("gens")) : List.of();
    return Optional.of(
        new Order(tickets(f.get("tickets")), parsed, field(f, "expires_at"), seats, gens));
  }

  /** Names and values of a RESP3 map or a RESP2 flat array of pairs. */
  static Map<String, Object> fields(Object reply) {
    if (reply instanceof Map<?, ?> map) {
      Map<String, Object> out = new LinkedHashMap<>();
      map.forEach((name, value) -> out.put(name(name), value));
      return out;
    }
    if (reply instanceof List<?> flat && flat.size() % 2 == 0) {
      Map<String, Object> out = new LinkedHashMap<>();
      for (int i = 0; i < flat.size(); i += 2) {
        out.put(name(flat.get(i)), flat.get(i + 1));
      }
      return out;
    }
    throw unexpected("a map or a flat array of pairs", reply);
  }

  private static String name(Object name) {
    if (name instanceof String s) {
      return s;
    }
    throw unexpected("a field name", name);
  }

  private static long field(Map<String, Object> fields, String name) {
    if (!fields.containsKey(name)) {
      throw new IllegalStateException("ticketgate: the reply lacks the field " + name);
    }
    return integer(fields.get(name));
  }

  private static String text(Map<String, Object> fields, String name) {
    if (fields.get(name) instanceof String s) {
      return s;
    }
    throw unexpected("a string field " + name, fields.get(name));
  }

  private static Optional<String> optionalText(Map<String, Object> fields, String name) {
    Object value = fields.get(name);
    return value == null ? Optional.empty() : Optional.of(text(fields, name));
  }

  private static IllegalStateException unexpected(String wanted, Object got) {
    String type = got == null ? "null" : got.getClass().getSimpleName();
    return new IllegalStateException(
        "ticketgate: expected " + wanted + " in the reply, got " + type + " " + got);
  }
}
