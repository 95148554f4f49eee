package restoresim.peer;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;

/**
 * Kafka Streams as one instance of an application that restoresim's runtime shares (issue 26,
 * the mixed application): RestorePeer's topology (the count topology, store "counts", its
 * changelog "<application.id>-counts-changelog", the same bytes as restoresim writes), joined
 * under --group-protocol (classic or streams, Kafka's group.protocol). Prints each state change
 * as a line "state FROM TO" on stdout and runs until its standard input ends; then it closes
 * (leaving the group, committing first), prints "closed CLEAN|TIMEOUT" and exits 0, or 1 when a
 * thread failed. Options as RestorePeer's, plus --commit-interval-ms (default 200).
 */
public final class GroupMember {
  private GroupMember() {}

  public static void main(String[] args) throws Exception {
    final Map<String, String> a = RestorePeer.parse(args);
    final Properties config = RestorePeer.config(a);
    config.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, a.getOrDefault("group-protocol", "streams"));
    config.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG,
        Long.parseLong(a.getOrDefault("commit-interval-ms", "200")));
    final KafkaStreams streams =
        new KafkaStreams(RestorePeer.topology(a.get("input-topic")), config);
    final boolean[] failed = {false};
    streams.setStateListener((to, from) -> {
      synchronized (System.out) {
        System.out.println("state " + from + " " + to);
        System.out.flush();
      }
    });
    streams.setUncaughtExceptionHandler(e -> {
      System.err.println("restoresim-peer member: " + e);
      failed[0] = true;
      return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler
          .StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    });
    streams.start();
    try {
      while (System.in.read() >= 0) {
        // Lines on stdin are ignored; the end of input stops the member.
      }
    } catch (IOException e) {
      System.err.println("restoresim-peer member: stdin: " + e);
    }
    final boolean clean = streams.close(Duration.ofSeconds(60));
    System.out.println("closed " + (clean ? "CLEAN" : "TIMEOUT"));
    System.out.flush();
    System.exit(failed[0] || !clean ? 1 : 0);
  }
}
