package io.ticketgate;

import java.util.Map;
import java.util.function.Function;

/**
 * An error reply of the ticketgate module ({@code -CODE message}): the base of one subclass per
 * code, e.g. {@link SoldOutException}. Other codes (Redis's own {@code NOPERM}, codes added later)
 * arrive as this base class with their code.
 */
public class TicketGateException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private static final Map<String, Function<String, TicketGateException>> BY_CODE =
      Map.ofEntries(
          Map.entry("ERR", InvalidArgumentException::new),
          Map.entry("NOEVENT", NoEventException::new),
          Map.entry("EXISTS", ExistsException::new),
          Map.entry("NOTOPEN", NotOpenException::new),
          Map.entry("CLOSED", ClosedException::new),
          Map.entry("SOLDOUT", SoldOutException::new),
          Map.entry("LIMIT", LimitException::new),
          Map.entry("NOTOGETHER", NotTogetherException::new),
          Map.entry("TAKEN", TakenException::new),
          Map.entry("ORPHAN", OrphanException::new),
          Map.entry("SHORT", ShortException::new),
          Map.entry("NOKEY", NoKeyException::new),
          Map.entry("NOALLOCATION", NoAllocationException::new),
          Map.entry("NOHOLD", NoHoldException::new),
          Map.entry("NOTSOLD", NotSoldException::new),
          Map.entry("USED", UsedException::new),
          Map.entry("STALE", StaleException::new),
          Map.entry("LISTED", ListedException::new),
          Map.entry("NOTLISTED", NotListedException::new),
          Map.entry("HOLDING", HoldingException::new),
          Map.entry("UNSYNCED", UnsyncedException::new),
          Map.entry("WRONGTYPE", WrongTypeException::new),
          Map.entry("TRYAGAIN", TryAgainException::new),
          Map.entry("QUEUE", QueueException::new),
          Map.entry("NOTRESTORING", NotRestoringException::new),
          Map.entry("INCOMPLETE", IncompleteException::new),
          Map.entry("CORRUPT", CorruptException::new),
          Map.entry("INTERNAL", InternalException::new));

  private final String code;
  private final String serverMessage;

  /** An error reply with the given code and the rest of the server's line. */
  public TicketGateException(String code, String serverMessage) {
    super(serverMessage.isEmpty() ? code : code + " " + serverMessage);
    this.code = code;
    this.serverMessage = serverMessage;
  }

  /** The code: the first word of the error reply ({@code SOLDOUT}, {@code NOEVENT}, ...). */
  public String code() {
    return code;
  }

  /** The server's message after the code, e.g. {@code event 'e1' is sold out}. */
  public String serverMessage() {
    return serverMessage;
  }

  /**
   * The exception for one error line as the server sent it (without the leading {@code -}). The
   * first word is the code when it is all upper-case letters; otherwise the code is {@code ERR}.
   */
  public static TicketGateException fromReply(String line) {
    int space = line.indexOf(' ');
    String code = space < 0 ? line : line.substring(0, space);
    String message = space < 0 ? "" : line.substring(space + 1);
    if (code.isEmpty() || !code.chars().allMatch(c -> c >= 'A' && c <= 'Z')) {
      return new InvalidArgumentException(line);
    }
    Function<String, TicketGateException> make = BY_CODE.get(code);
    return make == null ? new TicketGateException(code, message) : make.apply(message);
  }
}
