package io.ticketgate;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Runs a vector's {@code call} on a gate and renders the typed result as the vectors' JSON {@code
 * expect} (kind and value), so that a test compares like with like.
 */
final class Calls {
  private Calls() {}

  /** The method's typed result as {@code {"kind": ..., "value": ...}}. */
  static JsonObject run(TicketGate gate, JsonObject call) {
    String method = call.get("method").getAsString();
    JsonArray args = call.getAsJsonArray("args");
    JsonObject options = call.getAsJsonObject("options");
    String event = args.get(0).getAsString();
    return switch (method) {
      case "init" -> {
        gate.init(event, args.get(1).getAsLong(), initOptions(options));
        yield kind("ok", null);
      }
      case "open" -> {
        gate.open(event);
        yield kind("ok", null);
      }
      case "close" -> {
        gate.close(event);
        yield kind("ok", null);
      }
      case "claim" -> claim(gate, event, args.get(1).getAsString(), options);
      case "status" -> kind("status", status(gate.status(event)));
      case "layout" -> gate.layout(event).map(l -> kind("layout", layout(l))).orElse(nil());
      case "seatmap" ->
          gate.seatmap(event).map(m -> kind("seatmap", new JsonPrimitive(m))).orElse(nil());
      case "allocations" -> allocations(gate.allocations(event));
      case "allocate", "release" ->
          allocation(gate, method, event, args.get(1).getAsString(), options);
      case "transfer" -> transfer(gate, event, args, options);
      case "resell", "unlist" -> resale(gate, method, event, args.get(1).getAsString(), options);
      case "scan" -> {
        String gateName = options.has("gate") ? options.get("gate").getAsString() : null;
        gate.scan(event, args.get(1).getAsLong(), args.get(2).getAsLong(), gateName);
        yield kind("ok", null);
      }
      case "drop" ->
          integer(
              options.has("force") && options.get("force").getAsBoolean()
                  ? gate.dropForce(event)
                  : gate.drop(event));
      default -> userCall(gate, method, event, args.get(1).getAsString(), options);
    };
  }

  private static JsonObject userCall(
      TicketGate gate, String method, String event, String user, JsonObject options) {
    return switch (method) {
      case "confirm" -> integer(gate.confirm(event, user));
      case "cancel" -> optionalTicket(gate.cancel(event, user));
      case "holder" -> optionalTicket(gate.holder(event, user));
      case "order" -> gate.order(event, user).map(o -> kind("order", order(o))).orElse(nil());
      case "wait" ->
          integer(
              options.has("count")
                  ? gate.waitFor(event, user, options.get("count").getAsInt())
                  : gate.waitFor(event, user));
      case "leave" -> kind("bool", new JsonPrimitive(gate.leave(event, user)));
      case "position" -> gate.position(event, user).map(Calls::integer).orElse(nil());
      default -> throw new IllegalArgumentException("unknown method " + method);
    };
  }

  private static JsonObject transfer(
      TicketGate gate, String event, JsonArray args, JsonObject options) {
    String from = args.get(1).getAsString();
    String to = args.get(2).getAsString();
    return integer(
        options.has("tickets")
            ? gate.transfer(event, from, to, longs(options.getAsJsonArray("tickets")))
            : gate.transfer(event, from, to));
  }

  private static JsonObject resale(
      TicketGate gate, String method, String event, String user, JsonObject options) {
    List<Long> tickets = options.has("tickets") ? longs(options.getAsJsonArray("tickets")) : null;
    if (method.equals("unlist")) {
      return integer(
          tickets == null ? gate.unlist(event, user) : gate.unlist(event, user, tickets));
    }
    return integer(tickets == null ? gate.resell(event, user) : gate.resell(event, user, tickets));
  }

  private static JsonObject allocation(
      TicketGate gate, String method, String event, String name, JsonObject options) {
    if (method.equals("release")) {
      if (options.has("seats")) {
        return integer(gate.releaseSeats(event, name, ids(options)));
      }
      return integer(
          options.has("count")
              ? gate.release(event, name, options.get("count").getAsInt())
              : gate.release(event, name));
    }
    AllocateOptions o =
        options.has("seats")
            ? AllocateOptions.seats(ids(options))
            : AllocateOptions.count(options.get("count").getAsInt());
    if (options.has("release")) {
      o = o.release(Instant.ofEpochMilli(options.get("release").getAsLong()));
    }
    o = options.has("key") ? o.key(options.get("key").getAsString()) : o;
    o = options.has("category") ? o.category(options.get("category").getAsString()) : o;
    o = options.has("section") ? o.section(options.get("section").getAsString()) : o;
    return kind("tickets", numbers(gate.allocate(event, name, o)));
  }

  static JsonObject allocations(List<Allocation> all) {
    if (all.isEmpty()) {
      return kind("allocations", new JsonArray());
    }
    JsonArray out = new JsonArray();
    for (Allocation a : all) {
      JsonObject v = new JsonObject();
      v.addProperty("name", a.name());
      v.addProperty("free", a.free());
      v.addProperty("claimed", a.claimed());
      v.add("release", a.release().<JsonElement>map(JsonPrimitive::new).orElse(JsonNull.INSTANCE));
      out.add(v);
    }
    return kind("allocations", out);
  }

  private static List<Long> ids(JsonObject options) {
    return longs(options.getAsJsonArray("seats"));
  }

  private static List<Long> longs(JsonArray values) {
    List<Long> out = new java.util.ArrayList<>();
    values.forEach(id -> out.add(id.getAsLong()));
    return out;
  }

  private static String text(JsonObject options, String name) {
    return options.has(name) ? options.get(name).getAsString() : null;
  }

  private static JsonObject claim(TicketGate gate, String event, String user, JsonObject options) {
    Duration hold = options.has("hold") ? Duration.ofMillis(options.get("hold").getAsLong()) : null;
    if (options.has("seats")) {
      String from = text(options, "from");
      List<Long> seats = ids(options);
      return kind(
          "tickets",
          numbers(
              from == null
                  ? gate.claimSeats(event, user, seats, hold)
                  : gate.claimSeats(event, user, seats, hold, from, text(options, "key"))));
    }
    if (options.has("section")
        || options.has("category")
        || options.has("accessible")
        || options.has("split")
        || options.has("from")) {
      return kind("tickets", numbers(gate.claim(event, user, claimOptions(options, hold))));
    }
    if (options.has("count")) {
      int count = options.get("count").getAsInt();
      List<Long> tickets =
          hold == null ? gate.claim(event, user, count) : gate.claim(event, user, count, hold);
      return kind("tickets", numbers(tickets));
    }
    long ticket = hold == null ? gate.claim(event, user) : gate.claim(event, user, hold);
    return kind("ticket", new JsonPrimitive(ticket));
  }

  /** The seat options given in reverse, to show they are sent in the documented order. */
  private static ClaimOptions claimOptions(JsonObject options, Duration hold) {
    ClaimOptions o = ClaimOptions.count(options.get("count").getAsInt());
    if (options.has("split") && options.get("split").getAsBoolean()) {
      o = o.split();
    }
    if (options.has("accessible")) {
      o = o.accessible(options.get("accessible").getAsInt());
    }
    if (options.has("category")) {
      o = o.category(options.get("category").getAsString());
    }
    if (options.has("section")) {
      o = o.section(options.get("section").getAsString());
    }
    if (options.has("from")) {
      o = o.from(options.get("from").getAsString(), text(options, "key"));
    }
    return hold == null ? o : o.hold(hold);
  }

  static JsonObject layout(Layout layout) {
    JsonArray sections = new JsonArray();
    for (Layout.Section s : layout.sections()) {
      JsonObject section = new JsonObject();
      section.addProperty("name", s.name());
      section.addProperty("category", s.category());
      JsonArray rows = new JsonArray();
      for (Layout.Row r : s.rows()) {
        JsonObject row = new JsonObject();
        row.addProperty("name", r.name());
        row.addProperty("seats", r.seats());
        row.addProperty("first", r.first());
        JsonArray blocked = new JsonArray();
        r.blocked().forEach(blocked::add);
        row.add("blocked", blocked);
        JsonArray accessible = new JsonArray();
        r.accessible().forEach(accessible::add);
        row.add("accessible", accessible);
        row.addProperty("rank", r.rank());
        row.addProperty("center", r.center());
        row.addProperty("category", r.category());
        row.addProperty("first_id", r.firstId());
        rows.add(row);
      }
      section.add("rows", rows);
      sections.add(section);
    }
    JsonObject v = new JsonObject();
    v.add("sections", sections);
    return v;
  }

  private static InitOptions initOptions(JsonObject options) {
    InitOptions o = InitOptions.defaults();
    if (options.has("opens")) {
      o = o.opensAt(Instant.ofEpochMilli(options.get("opens").getAsLong()));
    }
    if (options.has("closes")) {
      o = o.closesAt(Instant.ofEpochMilli(options.get("closes").getAsLong()));
    }
    if (options.has("hold")) {
      o = o.hold(Duration.ofMillis(options.get("hold").getAsLong()));
    }
    if (options.has("limit")) {
      o = o.limit(options.get("limit").getAsInt());
    }
    if (options.has("offer")) {
      o = o.offer(Duration.ofMillis(options.get("offer").getAsLong()));
    }
    if (options.has("draw") && options.get("draw").getAsBoolean()) {
      o = o.draw();
    }
    if (options.has("transfer_until")) {
      o = o.transferUntil(Instant.ofEpochMilli(options.get("transfer_until").getAsLong()));
    }
    if (options.has("admit")) {
      o = o.admit(options.get("admit").getAsInt());
    }
    if (options.has("seats")) {
      o = o.seats(options.get("seats").getAsString());
    }
    return o;
  }

  /** A Status as the vectors write it: draw/seed only when present. */
  static JsonObject status(Status s) {
    JsonObject v = new JsonObject();
    v.addProperty("total", s.total());
    v.addProperty("remaining", s.remaining());
    v.addProperty("claimed", s.claimed());
    v.addProperty("status", s.status());
    v.addProperty("opens_at", s.opensAt());
    v.addProperty("closes_at", s.closesAt());
    v.addProperty("unsynced", s.unsynced());
    v.addProperty("held", s.held());
    v.addProperty("waiting", s.waiting());
    v.add(
        "incarnation",
        s.incarnation().<JsonElement>map(JsonPrimitive::new).orElse(JsonNull.INSTANCE));
    s.draw().ifPresent(d -> v.addProperty("draw", d));
    s.seed().ifPresent(d -> v.addProperty("seed", d));
    s.admit().ifPresent(a -> v.addProperty("admit", a));
    s.categories()
        .ifPresent(
            c -> {
              JsonObject categories = new JsonObject();
              c.forEach(categories::addProperty);
              v.add("categories", categories);
            });
    s.accessible().ifPresent(a -> v.addProperty("accessible", a));
    s.allocated().ifPresent(a -> v.addProperty("allocated", a));
    if (s.resale() != 0) { // STATUS sends it only when some are listed
      v.addProperty("resale", s.resale());
    }
    return v;
  }

  static JsonObject order(Order o) {
    JsonObject v = new JsonObject();
    v.add("tickets", numbers(o.tickets()));
    v.addProperty("state", o.state().name().toLowerCase(Locale.ROOT));
    v.addProperty("expires_at", o.expiresAt());
    if (!o.seats().isEmpty()) {
      JsonArray seats = new JsonArray();
      o.seats().forEach(seats::add);
      v.add("seats", seats);
    }
    v.add("gens", numbers(o.gens()));
    return v;
  }

  private static JsonArray numbers(List<Long> values) {
    JsonArray array = new JsonArray();
    values.forEach(array::add);
    return array;
  }

  private static JsonObject optionalTicket(Optional<Long> ticket) {
    return ticket.map(t -> kind("ticket", new JsonPrimitive(t))).orElse(nil());
  }

  private static JsonObject integer(long value) {
    return kind("integer", new JsonPrimitive(value));
  }

  private static JsonObject nil() {
    return kind("nil", null);
  }

  private static JsonObject kind(String kind, JsonElement value) {
    JsonObject result = new JsonObject();
    result.addProperty("kind", kind);
    if (value != null) {
      result.add("value", value);
    }
    return result;
  }
}
