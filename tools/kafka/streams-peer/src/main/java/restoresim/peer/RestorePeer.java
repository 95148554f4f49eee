package restoresim.peer;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
// Kafka 4.4 moved AppInfoParser into an internals package (4.1 had it in common.utils).
import org.apache.kafka.common.utils.internals.AppInfoParser;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * Kafka Streams restoring a changelog, for the restore benchmark (restoresim bench --peer
 * kafka-streams). The topology is restoresim's: a source on the input topic feeding a processor
 * that owns a persistent key-value store "counts" (plain RocksDBStore, caching off, logged to
 * "<application.id>-counts-changelog"), so Kafka Streams restores exactly the changelog our
 * runtime restores. The benchmark leaves the input empty: only restoration runs.
 *
 * <p>Timed by a StateRestoreListener: from the first onRestoreStart to the onRestoreEnd of the
 * last partition, with the process's CPU time over the same span. Then every partition's store
 * is read back through interactive queries and summarised as restoresim does (entries and an
 * FNV-1a hash over the entries in key order), so the benchmark checks its contents. Prints one
 * JSON object on stdout. --processing-guarantee exactly_once_v2 restores as an EOS application
 * does (read_committed); the default is at_least_once.
 */
public final class RestorePeer {
  private static final long FNV_OFFSET = 0xcbf29ce484222325L;
  private static final long FNV_PRIME = 0x100000001b3L;

  /**
   * Times restoration; records progress for the benchmark's plot. Only partitions with records
   * to restore (start below end) count, as restoresim's timer: a partition with nothing to
   * restore would otherwise end the span before another one's restoration began.
   */
  static final class Timer implements StateRestoreListener {
    private final int partitions;
    private final CountDownLatch done;
    private final java.util.Set<TopicPartition> timed = new java.util.HashSet<>();
    private long startNs = -1;
    private long endNs = -1;
    private long cpuStartNs;
    private long cpuEndNs;
    private long restored;
    private int ended;
    private long lastSampleNs;
    private final List<long[]> progress = new ArrayList<>();

    Timer(int partitions) {
      this.partitions = partitions;
      this.done = new CountDownLatch(partitions > 0 ? 1 : 0);
    }

    @Override
    public synchronized void onRestoreStart(TopicPartition tp, String store, long start, long end) {
      if (end <= start) return;
      timed.add(tp);
      if (startNs < 0) {
        startNs = System.nanoTime();
        cpuStartNs = cpuNs();
        progress.add(new long[] {0, 0});
      }
    }

    @Override
    public synchronized void onBatchRestored(TopicPartition tp, String store, long batchEnd,
                                             long records) {
      restored += records;
      final long now = System.nanoTime();
      if (now - lastSampleNs >= 5_000_000L) {
        lastSampleNs = now;
        progress.add(new long[] {now - startNs, restored});
      }
    }

    @Override
    public synchronized void onRestoreEnd(TopicPartition tp, String store, long total) {
      if (!timed.remove(tp)) return;
      if (++ended == partitions) {
        endNs = System.nanoTime();
        cpuEndNs = cpuNs();
        progress.add(new long[] {endNs - startNs, restored});
        done.countDown();
      }
    }

    private static long cpuNs() {
      return ((com.sun.management.OperatingSystemMXBean)
              ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }
  }

  static long digestAdd(long hash, byte[] bytes) {
    for (int i = 0; i < 4; ++i) {
      hash ^= (bytes.length >>> (8 * i)) & 0xff;
      hash *= FNV_PRIME;
    }
    for (byte b : bytes) {
      hash ^= b & 0xff;
      hash *= FNV_PRIME;
    }
    return hash;
  }

  static Map<String, String> parse(String[] args) {
    Map<String, String> out = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--")) throw new IllegalArgumentException("bad option " + args[i]);
      out.put(args[i].substring(2), args[i + 1]);
    }
    for (String required : new String[] {"bootstrap-servers", "application-id", "input-topic",
        "partitions", "state-dir"}) {
      if (!out.containsKey(required)) throw new IllegalArgumentException("--" + required);
    }
    return out;
  }

  /** Records processed so far (the processing mode's counter) and when the first was. */
  static final java.util.concurrent.atomic.AtomicLong PROCESSED =
      new java.util.concurrent.atomic.AtomicLong();
  static volatile long firstProcessedNs = -1;

  /**
   * The topology. Restoring only, the processor does nothing (the input is empty); in the
   * processing mode it counts as restoresim's topology does: counts[key] += the decimal value.
   */
  static Topology topology(String input) {
    Topology topology = new Topology();
    topology.addSource("source", Serdes.ByteArray().deserializer(),
        Serdes.ByteArray().deserializer(), input);
    topology.addProcessor("process", () -> new Processor<byte[], byte[], Void, Void>() {
      private org.apache.kafka.streams.state.KeyValueStore<byte[], byte[]> counts;

      @Override
      public void init(org.apache.kafka.streams.processor.api.ProcessorContext<Void, Void> c) {
        counts = c.getStateStore("counts");
      }

      @Override
      public void process(Record<byte[], byte[]> record) {
        if (record.key() != null && record.value() != null) {
          final byte[] current = counts.get(record.key());
          long n = current == null ? 0 : Long.parseLong(new String(current));
          n += Long.parseLong(new String(record.value()));
          counts.put(record.key(), Long.toString(n).getBytes());
        }
        if (PROCESSED.getAndIncrement() == 0) firstProcessedNs = System.nanoTime();
      }
    }, "source");
    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("counts"),
        Serdes.ByteArray(), Serdes.ByteArray()).withCachingDisabled(), "process");
    return topology;
  }

  static Properties config(Map<String, String> a) {
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, a.get("application-id"));
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap-servers"));
    p.put(StreamsConfig.STATE_DIR_CONFIG, a.get("state-dir"));
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    // at_least_once (Kafka's default) or exactly_once_v2: then the restore consumer reads
    // committed records only (isolation.level=read_committed) up to the last stable offset.
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG,
        a.getOrDefault("processing-guarantee", StreamsConfig.AT_LEAST_ONCE));
    // The state updater (a restore thread of its own, KIP-869) is Kafka Streams 4.x's default;
    // said explicitly because that is what the benchmark compares against.
    p.put("__state.updater.enabled__", true);
    // Leave the group on close, so the next run in the same group starts at once.
    p.put(StreamsConfig.mainConsumerPrefix("internal.leave.group.on.close"), true);
    return p;
  }

  /**
   * The processing mode (--process-records N --restoring R): runs until N input records are
   * processed and the R partitions with records to restore have restored, sampling the count
   * processed every 2 ms; prints the samples and the restoration's span, in seconds since
   * KafkaStreams#start, as one JSON object. The benchmark pairs a run restoring with one that
   * is not, as it does for restoresim's runtime.
   */
  static int process(Map<String, String> a, long input, long timeoutS) throws Exception {
    final Timer timer = new Timer(Integer.parseInt(a.getOrDefault("restoring", "0")));
    final KafkaStreams streams = new KafkaStreams(topology(a.get("input-topic")), config(a));
    streams.setGlobalStateRestoreListener(timer);
    final long launchNs = System.nanoTime();
    final long deadline = launchNs + TimeUnit.SECONDS.toNanos(timeoutS);
    // May stop before the input is all processed: at the restoration's end, or this long after
    // the first processed record (as restoresim's ProcessingStop).
    final boolean atRestoreEnd = Boolean.parseBoolean(a.getOrDefault("stop-at-restore-end", "0"));
    final double afterFirstS = Double.parseDouble(a.getOrDefault("stop-after-first-s", "-1"));
    final StringBuilder samples = new StringBuilder();
    streams.start();
    long n;
    boolean done;
    do {
      Thread.sleep(2);
      n = PROCESSED.get();
      final long now = System.nanoTime();
      samples.append(samples.length() == 0 ? "" : ",")
          .append(String.format("[%.6f,%d]", (now - launchNs) / 1e9, n));
      final long first = firstProcessedNs;
      done = timer.done.getCount() == 0 && (n >= input || atRestoreEnd
          || (afterFirstS >= 0 && first >= 0 && now - first >= (long) (afterFirstS * 1e9)));
    } while (!done && System.nanoTime() < deadline);
    streams.close(Duration.ofSeconds(60));
    leaveGroup(a.get("bootstrap-servers"), a.get("application-id"));
    synchronized (timer) {
      final boolean timed = timer.startNs >= 0 && timer.endNs >= 0;
      System.out.printf("{\"kafka_streams_version\":\"%s\",\"done\":%b,\"processed\":%d,"
              + "\"first_processed_s\":%.6f,\"restore_start_s\":%.6f,\"restore_end_s\":%.6f,"
              + "\"restored_records\":%d,\"samples\":[%s]}%n",
          AppInfoParser.getVersion(), done, n,
          firstProcessedNs < 0 ? -1.0 : (firstProcessedNs - launchNs) / 1e9,
          timed ? (timer.startNs - launchNs) / 1e9 : -1.0,
          timed ? (timer.endNs - launchNs) / 1e9 : -1.0, timer.restored, samples);
    }
    return done ? 0 : 1;
  }

  public static void main(String[] args) throws Exception {
    final Map<String, String> a = parse(args);
    if (a.containsKey("process-records")) {
      System.exit(process(a, Long.parseLong(a.get("process-records")),
          Long.parseLong(a.getOrDefault("timeout-s", "600"))));
    }
    final int partitions = Integer.parseInt(a.get("partitions"));
    final long timeoutS = Long.parseLong(a.getOrDefault("timeout-s", "600"));
    final Timer timer = new Timer(partitions);
    final KafkaStreams streams = new KafkaStreams(topology(a.get("input-topic")), config(a));
    streams.setGlobalStateRestoreListener(timer);
    final long launchNs = System.nanoTime();
    streams.start();
    final boolean restored = timer.done.await(timeoutS, TimeUnit.SECONDS);
    final StringBuilder stores = new StringBuilder();
    boolean running = false;
    if (restored) {
      final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
      while (streams.state() != KafkaStreams.State.RUNNING && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      running = streams.state() == KafkaStreams.State.RUNNING;
      for (int p = 0; running && p < partitions; ++p) {
        ReadOnlyKeyValueStore<byte[], byte[]> store = streams.store(
            StoreQueryParameters.fromNameAndType("counts",
                QueryableStoreTypes.<byte[], byte[]>keyValueStore()).withPartition(p));
        long hash = FNV_OFFSET;
        long entries = 0;
        try (KeyValueIterator<byte[], byte[]> it = store.all()) {
          while (it.hasNext()) {
            KeyValue<byte[], byte[]> kv = it.next();
            hash = digestAdd(digestAdd(hash, kv.key), kv.value);
            ++entries;
          }
        }
        stores.append(p == 0 ? "" : ",").append(String.format(
            "{\"partition\":%d,\"entries\":%d,\"hash\":\"%016x\"}", p, entries, hash));
      }
    }
    streams.close(Duration.ofSeconds(60));
    leaveGroup(a.get("bootstrap-servers"), a.get("application-id"));
    print(timer, restored, running, stores, (timer.startNs - launchNs) / 1e9,
        config(a).getProperty(StreamsConfig.PROCESSING_GUARANTEE_CONFIG));
    System.exit(restored && running ? 0 : 1);
  }

  // Kafka Streams' consumer may stay a member until its session times out: remove whatever is
  // left, so that the next run in this group (ours or Kafka Streams') does not wait for it.
  static void leaveGroup(String bootstrap, String group) {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (Admin admin = Admin.create(p)) {
      ConsumerGroupDescription d =
          admin.describeConsumerGroups(List.of(group)).all().get().get(group);
      if (d != null && !d.members().isEmpty()) {
        admin.removeMembersFromConsumerGroup(group, new RemoveMembersFromConsumerGroupOptions())
            .all().get();
      }
    } catch (Exception e) {
      System.err.println("restoresim-peer: could not empty group " + group + ": " + e);
    }
  }

  static void print(Timer t, boolean restored, boolean running, StringBuilder stores,
                    double startDelayS, String guarantee) {
    synchronized (t) {
      StringBuilder progress = new StringBuilder();
      for (long[] s : t.progress) {
        progress.append(progress.length() == 0 ? "" : ",")
            .append(String.format("[%.6f,%d]", s[0] / 1e9, s[1]));
      }
      System.out.printf("{\"kafka_streams_version\":\"%s\",\"processing_guarantee\":\"%s\","
              + "\"restored\":%b,\"running\":%b,"
              + "\"records\":%d,\"restore_seconds\":%.6f,\"cpu_seconds\":%.6f,"
              + "\"seconds_to_first_restore\":%.3f,\"stores\":[%s],\"progress\":[%s]}%n",
          AppInfoParser.getVersion(), guarantee, restored, running, t.restored,
          restored ? (t.endNs - t.startNs) / 1e9 : -1.0,
          restored ? (t.cpuEndNs - t.cpuStartNs) / 1e9 : -1.0, startDelayS, stores, progress);
    }
  }
}
