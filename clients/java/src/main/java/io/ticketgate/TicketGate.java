package io.ticketgate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The ticketgate module's commands, typed, over Lettuce ({@link LettuceTicketGate}) or Jedis
 * ({@link JedisTicketGate}), standalone or cluster. Every command goes to the event's slot first
 * time. Error replies are thrown as the subclass of {@link TicketGateException} for their code,
 * e.g. {@link SoldOutException}. Thread-safe when the underlying connection is (Lettuce connections
 * and Jedis pools and clusters are). This class names no driver type, so an application needs only
 * the driver it uses, also under reflection (Spring).
 *
 * <pre>{@code
 * TicketGate gate = LettuceTicketGate.create(redisClient.connect());
 * gate.init("e1", 100);
 * long ticket = gate.claim("e1", "alice");
 * }</pre>
 */
public final class TicketGate implements AutoCloseable {
  /**
   * What {@link #waitFor} and {@link #position} answer for a user who entered a draw not yet drawn:
   * no place yet (not a place n &gt;= 1, not 0 = offered).
   */
  public static final long ENTERED = -1;

  private final Transport transport;

  /** Built by {@link LettuceTicketGate} or {@link JedisTicketGate}. */
  TicketGate(Transport transport) {
    this.transport = transport;
  }

  /** Creates an event of {@code total} tickets numbered 1..=total, open now, final sales. */
  public void init(String event, long total) {
    init(event, total, InitOptions.defaults());
  }

  /** Creates an event with options; {@link ExistsException} if it exists. */
  public void init(String event, long total, InitOptions options) {
    List<String> args = new ArrayList<>();
    args.add(Long.toString(total));
    args.addAll(options.words());
    send(TicketCommand.INIT, event, args);
  }

  /** Opens the event for claims. */
  public void open(String event) {
    send(TicketCommand.OPEN, event, List.of());
  }

  /**
   * Closes the event: claims are refused, confirmations still work. Not {@link #close()}, which
   * closes the connection the gate opened.
   */
  public void close(String event) {
    send(TicketCommand.CLOSE, event, List.of());
  }

  /**
   * Claims the lowest free ticket for the user and returns it; a user who holds tickets gets the
   * lowest of them back and nothing changes.
   */
  public long claim(String event, String user) {
    return Replies.integer(send(TicketCommand.CLAIM, event, List.of(user)));
  }

  /** As {@link #claim(String, String)}, holding the ticket this long (zero: a final sale). */
  public long claim(String event, String user, Duration hold) {
    return Replies.integer(send(TicketCommand.CLAIM, event, List.of(user, "HOLD", ms(hold))));
  }

  /** Claims the {@code count} lowest free tickets, all or nothing; returns all the user's. */
  public List<Long> claim(String event, String user, int count) {
    List<String> args = List.of(user, "COUNT", Integer.toString(count));
    return Replies.tickets(send(TicketCommand.CLAIM, event, args));
  }

  /** As {@link #claim(String, String, int)}, holding the tickets this long. */
  public List<Long> claim(String event, String user, int count, Duration hold) {
    List<String> args = List.of(user, "COUNT", Integer.toString(count), "HOLD", ms(hold));
    return Replies.tickets(send(TicketCommand.CLAIM, event, args));
  }

  /**
   * Claims {@code options.count} tickets, all or nothing; returns all the user's (a repeat claim
   * returns those the user holds already). On a seated event: the best seats together within the
   * options' section and category ({@link NotTogetherException} if none are), or single seats with
   * {@link ClaimOptions#split}.
   */
  public List<Long> claim(String event, String user, ClaimOptions options) {
    List<String> args = new ArrayList<>();
    args.add(user);
    args.addAll(options.words());
    return Replies.tickets(send(TicketCommand.CLAIM, event, args));
  }

  /**
   * Claims exactly these seats (ids; {@link #layout} names them) of a seated event: {@link
   * TakenException} if one is held or sold, {@link OrphanException} if they would leave a single
   * seat alone that another pick of the row would not.
   */
  public List<Long> claimSeats(String event, String user, List<Long> seats) {
    return claimSeats(event, user, seats, null);
  }

  /** As {@link #claimSeats(String, String, List)}, holding them this long (zero: a final sale). */
  public List<Long> claimSeats(String event, String user, List<Long> seats, Duration hold) {
    return claimSeats(event, user, seats, hold, null, null);
  }

  /**
   * As {@link #claimSeats(String, String, List, Duration)} (a null hold: the event's), from the
   * allocation {@code from} with its {@code key} (null: none); see {@link ClaimOptions#from}.
   */
  public List<Long> claimSeats(
      String event, String user, List<Long> seats, Duration hold, String from, String key) {
    List<String> args = new ArrayList<>();
    args.add(user);
    if (hold != null) {
      args.addAll(List.of("HOLD", ms(hold)));
    }
    ClaimOptions.addText(args, "FROM", from);
    ClaimOptions.addText(args, "KEY", key);
    ClaimOptions.addSeats(args, seats);
    return Replies.tickets(send(TicketCommand.CLAIM, event, args));
  }

  /** A seated event's layout ({@link Layout#seatName} names a seat id), or empty if not seated. */
  public Optional<Layout> layout(String event) {
    return Replies.layout(send(TicketCommand.LAYOUT, event, List.of()));
  }

  /**
   * A seated event's seats, one character per seat id (index id - 1): {@code .} free, {@code h}
   * held, {@code s} sold, {@code a} free in an allocation; empty if the event is not seated.
   */
  public Optional<String> seatmap(String event) {
    return Replies.seatmap(send(TicketCommand.SEATMAP, event, List.of()));
  }

  /**
   * Operator: sets free stock aside in the allocation {@code name}, out of public sale (claims take
   * it with {@link ClaimOptions#from}); returns the tickets allocated, ascending. {@link
   * ShortException} when fewer are free (nothing changes), {@link NoKeyException} adding to an
   * allocation made with another key, {@link TakenException} for a picked seat not free.
   */
  public List<Long> allocate(String event, String name, AllocateOptions options) {
    List<String> args = new ArrayList<>();
    args.add(name);
    args.addAll(options.words());
    return Replies.tickets(send(TicketCommand.ALLOCATE, event, args));
  }

  /**
   * Operator: gives all the allocation's free tickets back to public sale, the waiting list offered
   * them first; returns how many. {@link NoAllocationException} for an unknown name.
   */
  public long release(String event, String name) {
    return Replies.integer(send(TicketCommand.RELEASE, event, List.of(name)));
  }

  /** As {@link #release(String, String)} for the allocation's {@code count} lowest free tickets. */
  public long release(String event, String name, int count) {
    List<String> args = List.of(name, "COUNT", Integer.toString(count));
    return Replies.integer(send(TicketCommand.RELEASE, event, args));
  }

  /** As {@link #release(String, String)} for exactly these free tickets (seat ids). */
  public long releaseSeats(String event, String name, List<Long> seats) {
    List<String> args = new ArrayList<>(List.of(name));
    ClaimOptions.addSeats(args, seats);
    return Replies.integer(send(TicketCommand.RELEASE, event, args));
  }

  /** The event's allocations in name order (never their keys). */
  public List<Allocation> allocations(String event) {
    return Replies.allocations(send(TicketCommand.ALLOCATIONS, event, List.of()));
  }

  /**
   * Gives all of {@code from}'s sold tickets to {@code to} in one step, each a generation up
   * ({@link Order#gens}); returns how many moved. {@link NotSoldException} ({@code from}'s order is
   * held, or {@code to} holds a held one), {@link UsedException} (a ticket was scanned), {@link
   * LimitException} ({@code to}'s), {@link ClosedException} (after the event's {@code
   * TRANSFER_UNTIL}), {@link NoHoldException} ({@code from} holds nothing), {@link ListedException}
   * (a ticket is listed for resale: {@link #unlist} it first).
   */
  public long transfer(String event, String from, String to) {
    return Replies.integer(send(TicketCommand.TRANSFER, event, List.of(from, to)));
  }

  /**
   * As {@link #transfer(String, String, String)} for these tickets of {@code from}'s only ({@link
   * NotSoldException} for one that is not).
   */
  public long transfer(String event, String from, String to, List<Long> tickets) {
    return Replies.integer(send(TicketCommand.TRANSFER, event, withTickets(tickets, from, to)));
  }

  /**
   * Lists all of {@code user}'s sold tickets not listed yet for resale at face value; returns how
   * many. They stay {@code user}'s until a buyer confirms one (a generation up); a claim or the
   * waiting list takes a listed ticket once no free one fits. {@link ListedException} (all are
   * listed already), {@link NotSoldException} ({@code user}'s order is held), {@link UsedException}
   * (a ticket was scanned), {@link ClosedException} (after the event's {@code TRANSFER_UNTIL}),
   * {@link NoHoldException} ({@code user} holds nothing).
   */
  public long resell(String event, String user) {
    return Replies.integer(send(TicketCommand.RESELL, event, List.of(user)));
  }

  /**
   * As {@link #resell(String, String)} for these tickets of {@code user}'s only ({@link
   * NotSoldException} for one that is not, {@link ListedException} for one listed already).
   */
  public long resell(String event, String user, List<Long> tickets) {
    return Replies.integer(send(TicketCommand.RESELL, event, withTickets(tickets, user)));
  }

  /**
   * Takes back all of {@code user}'s listed tickets that no buyer holds; returns how many (0: none
   * listed).
   */
  public long unlist(String event, String user) {
    return Replies.integer(send(TicketCommand.UNLIST, event, List.of(user)));
  }

  /**
   * As {@link #unlist(String, String)} for these tickets only: {@link NotListedException} for one
   * that is not listed by {@code user}, or that a buyer holds.
   */
  public long unlist(String event, String user, List<Long> tickets) {
    return Replies.integer(send(TicketCommand.UNLIST, event, withTickets(tickets, user)));
  }

  /** {@code first...}, then {@code TICKETS} and the ids (last: the module takes every id after). */
  private static List<String> withTickets(List<Long> tickets, String... first) {
    List<String> args = new ArrayList<>(List.of(first));
    args.add("TICKETS");
    tickets.forEach(t -> args.add(Long.toString(t)));
    return args;
  }

  /**
   * Admits {@code ticket} at generation {@code gen} at the door, once: returns on its first scan at
   * its current generation. {@link UsedException} when it was scanned before (the message says when
   * and at which gate), {@link StaleException} when it was transferred since (an old credential),
   * {@link NotSoldException} when it is free, held or listed.
   */
  public void scan(String event, long ticket, long gen) {
    scan(event, ticket, gen, null);
  }

  /** As {@link #scan(String, long, long)}, naming the gate (null: none). */
  public void scan(String event, long ticket, long gen, String gate) {
    List<String> args = new ArrayList<>(List.of(Long.toString(ticket), Long.toString(gen)));
    if (gate != null) {
      args.addAll(List.of("GATE", gate));
    }
    send(TicketCommand.SCAN, event, args);
  }

  /** Makes the user's held order sold; returns how many tickets the user now holds. */
  public long confirm(String event, String user) {
    return Replies.integer(send(TicketCommand.CONFIRM, event, List.of(user)));
  }

  /**
   * Releases all the user's tickets (every one of a multi-ticket order); returns the lowest, or
   * empty if the user held none.
   */
  public Optional<Long> cancel(String event, String user) {
    return Replies.optionalInteger(send(TicketCommand.CANCEL, event, List.of(user)));
  }

  /** The user's lowest ticket, or empty. */
  public Optional<Long> holder(String event, String user) {
    return Replies.optionalInteger(send(TicketCommand.HOLDER, event, List.of(user)));
  }

  /** The user's order, or empty when the user holds nothing. */
  public Optional<Order> order(String event, String user) {
    return Replies.order(send(TicketCommand.ORDER, event, List.of(user)));
  }

  /** The event's counters and state. */
  public Status status(String event) {
    return Replies.status(send(TicketCommand.STATUS, event, List.of()));
  }

  /** Deletes the event's keys; {@link UnsyncedException} while its log has entries. */
  public long drop(String event) {
    return Replies.integer(send(TicketCommand.DROP, event, List.of()));
  }

  /** Deletes the event's keys even if its log has entries not yet in MySQL. */
  public long dropForce(String event) {
    return Replies.integer(send(TicketCommand.DROP, event, List.of("FORCE")));
  }

  /**
   * Joins the waiting list for one ticket: the 1-based position, 0 when tickets were offered at
   * once, {@link #ENTERED} (-1) when the user entered a draw not yet drawn.
   */
  public long waitFor(String event, String user) {
    return Replies.integer(send(TicketCommand.WAIT, event, List.of(user)));
  }

  /** As {@link #waitFor(String, String)} for {@code count} tickets. */
  public long waitFor(String event, String user, int count) {
    List<String> args = List.of(user, "COUNT", Integer.toString(count));
    return Replies.integer(send(TicketCommand.WAIT, event, args));
  }

  /** Leaves the waiting list; false when the user was not on it. */
  public boolean leave(String event, String user) {
    return Replies.integer(send(TicketCommand.LEAVE, event, List.of(user))) == 1;
  }

  /**
   * The user's place in the waiting list (0: offered, {@link #ENTERED}: in a draw not yet drawn),
   * or empty.
   */
  public Optional<Long> position(String event, String user) {
    return Replies.optionalInteger(send(TicketCommand.POSITION, event, List.of(user)));
  }

  /** Closes the connection the gate opened itself, if any. */
  @Override
  public void close() {
    transport.close();
  }

  private Object send(TicketCommand command, String event, List<String> args) {
    return transport.send(command, event, args);
  }

  private static String ms(Duration duration) {
    return Long.toString(duration.toMillis());
  }
}
