package io.ticketgate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A minimal JSON reader for the module's stored layout (objects, arrays, strings without escapes
 * beyond the basic ones, numbers, true/false/null), so the client needs no JSON dependency. Numbers
 * are Long when integral, Double otherwise.
 */
final class Json {
  private final String text;
  private int at;

  private Json(String text) {
    this.text = text;
  }

  static Object parse(String text) {
    Json json = new Json(text);
    Object value = json.value();
    json.space();
    if (json.at != text.length()) {
      throw json.error("trailing text");
    }
    return value;
  }

  private Object value() {
    space();
    if (at >= text.length()) {
      throw error("a value");
    }
    char c = text.charAt(at);
    return switch (c) {
      case '{' -> object();
      case '[' -> array();
      case '"' -> string();
      case 't' -> word("true", Boolean.TRUE);
      case 'f' -> word("false", Boolean.FALSE);
      case 'n' -> word("null", null);
      default -> number();
    };
  }

  private Map<String, Object> object() {
    Map<String, Object> out = new LinkedHashMap<>();
    at++;
    space();
    if (peek('}')) {
      return out;
    }
    do {
      space();
      String name = string();
      space();
      expect(':');
      out.put(name, value());
      space();
    } while (peek(','));
    expect('}');
    return out;
  }

  private List<Object> array() {
    List<Object> out = new ArrayList<>();
    at++;
    space();
    if (peek(']')) {
      return out;
    }
    do {
      out.add(value());
      space();
    } while (peek(','));
    expect(']');
    return out;
  }

  private String string() {
    expect('"');
    StringBuilder out = new StringBuilder();
    while (at < text.length() && text.charAt(at) != '"') {
      char c = text.charAt(at++);
      if (c == '\\' && at < text.length()) {
        char e = text.charAt(at++);
        out.append(
            switch (e) {
              case 'n' -> '\n';
              case 't' -> '\t';
              case 'u' -> (char) Integer.parseInt(text.substring(at, at += 4), 16);
              default -> e;
            });
      } else {
        out.append(c);
      }
    }
    expect('"');
    return out.toString();
  }

  private Object number() {
    int start = at;
    while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
      at++;
    }
    String n = text.substring(start, at);
    if (n.isEmpty()) {
      throw error("a value");
    }
    boolean integral = n.chars().allMatch(c -> c == '-' || Character.isDigit(c));
    return integral ? (Object) Long.parseLong(n) : (Object) Double.parseDouble(n);
  }

  private Object word(String word, Object value) {
    if (!text.startsWith(word, at)) {
      throw error(word);
    }
    at += word.length();
    return value;
  }

  private boolean peek(char c) {
    if (at < text.length() && text.charAt(at) == c) {
      at++;
      return true;
    }
    return false;
  }

  private void expect(char c) {
    if (!peek(c)) {
      throw error("'" + c + "'");
    }
  }

  private void space() {
    while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
      at++;
    }
  }

  private IllegalStateException error(String wanted) {
    return new IllegalStateException("ticketgate: layout JSON: expected " + wanted + " at " + at);
  }
}
