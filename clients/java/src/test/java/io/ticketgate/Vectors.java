package io.ticketgate;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The shared test vectors, clients/vectors.json (format 1; see clients/vectors/README.md). */
record Vectors(String recordedWith, List<Vector> vectors) {

  /** One recorded reply and what it must become. */
  record Vector(
      String name,
      List<String> command,
      JsonObject call,
      String resp2,
      String resp3,
      JsonObject expect) {

    String raw(int protocol) {
      return protocol == 2 ? resp2 : resp3;
    }
  }

  static Vectors load() throws IOException {
    Path file = Path.of(System.getProperty("ticketgate.vectors", "../vectors.json"));
    JsonObject root =
        JsonParser.parseString(Files.readString(file, StandardCharsets.UTF_8)).getAsJsonObject();
    if (root.get("format").getAsInt() != 1) {
      throw new IllegalStateException("unknown vectors format " + root.get("format"));
    }
    List<Vector> vectors = new ArrayList<>();
    for (JsonElement item : root.getAsJsonArray("vectors")) {
      JsonObject v = item.getAsJsonObject();
      List<String> command = new ArrayList<>();
      v.getAsJsonArray("command").forEach(word -> command.add(word.getAsString()));
      JsonObject call = v.get("call").isJsonNull() ? null : v.getAsJsonObject("call");
      vectors.add(
          new Vector(
              v.get("name").getAsString(),
              command,
              call,
              v.get("resp2").getAsString(),
              v.get("resp3").getAsString(),
              v.getAsJsonObject("expect")));
    }
    return new Vectors(root.get("recorded_with").getAsString(), vectors);
  }
}
