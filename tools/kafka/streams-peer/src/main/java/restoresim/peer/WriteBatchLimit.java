package restoresim.peer;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.FileInputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompactionStyle;
import org.rocksdb.CompressionType;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The restore benchmark's WriteBatch limit in Kafka Streams' JVM (issue 27: "measure Java
 * RocksDB's WriteBatch alone in the peer's JVM beside ours to separate the library from the
 * loop"): the same records as restoresim's limit.write.writebatch case, read into memory first
 * from the files the benchmark wrote, then written in WriteBatches of --batch-records with the
 * options Kafka Streams' RocksDBStore opens a store with (its defaults: 50 MB LRU block cache,
 * 4 KB blocks, a Bloom filter, filters optimised for hits, 16 MB write buffers, 3 of them,
 * universal compaction, no compression, parallelism max(cores, 2), the WAL off), through the
 * rocksdbjni that Kafka Streams bundles. Timed from the first write to the last, with the
 * process's CPU time over the same span; no flush inside the span (as ours). Then each store is
 * read back in key order and summarised as restoresim does, so the benchmark checks its
 * contents. Prints one JSON object on stdout.
 *
 * <p>Records file (one per partition, p&lt;N&gt;.bin): for each record a big-endian int32 key
 * length, the key, an int32 value length (-1: a tombstone) and the value.
 */
public final class WriteBatchLimit {
  private static final long FNV_OFFSET = 0xcbf29ce484222325L;

  private record Write(byte[] key, byte[] value) {}

  private static List<Write> load(String path) throws IOException {
    List<Write> out = new ArrayList<>();
    try (DataInputStream in =
        new DataInputStream(new BufferedInputStream(new FileInputStream(path), 1 << 20))) {
      while (true) {
        final int keyLength;
        try {
          keyLength = in.readInt();
        } catch (EOFException end) {
          return out;
        }
        if (keyLength < 0) throw new IOException(path + ": a negative key length");
        byte[] key = new byte[keyLength];
        in.readFully(key);
        final int valueLength = in.readInt();
        byte[] value = null;
        if (valueLength >= 0) {
          value = new byte[valueLength];
          in.readFully(value);
        }
        out.add(new Write(key, value));
      }
    }
  }

  // Kafka Streams' RocksDBStore defaults (RocksDBStore#openDB), as restoresim's
  // KafkaStreamsRocksDbOptions (core/state/rocksdb_options.cc) mirrors them.
  private static Options kafkaStreamsOptions() {
    BlockBasedTableConfig table = new BlockBasedTableConfig();
    table.setBlockCache(new LRUCache(50L * 1024 * 1024));
    table.setBlockSize(4096L);
    table.setFilterPolicy(new BloomFilter());
    Options options = new Options();
    options.setOptimizeFiltersForHits(true);
    options.setTableFormatConfig(table);
    options.setWriteBufferSize(16L * 1024 * 1024);
    options.setCompressionType(CompressionType.NO_COMPRESSION);
    options.setCompactionStyle(CompactionStyle.UNIVERSAL);
    options.setMaxWriteBufferNumber(3);
    options.setCreateIfMissing(true);
    options.setErrorIfExists(false);
    options.setInfoLogLevel(InfoLogLevel.ERROR_LEVEL);
    options.setIncreaseParallelism(Math.max(Runtime.getRuntime().availableProcessors(), 2));
    return options;
  }

  private static long cpuNs() {
    return ((com.sun.management.OperatingSystemMXBean)
            ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> out = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--")) throw new IllegalArgumentException("bad option " + args[i]);
      out.put(args[i].substring(2), args[i + 1]);
    }
    for (String required : new String[] {"records-dir", "partitions", "db-dir", "batch-records"}) {
      if (!out.containsKey(required)) throw new IllegalArgumentException("--" + required);
    }
    return out;
  }

  public static void main(String[] args) throws Exception {
    final Map<String, String> a = parse(args);
    final int partitions = Integer.parseInt(a.get("partitions"));
    final int batchRecords = Integer.parseInt(a.get("batch-records"));
    if (partitions < 1 || batchRecords < 1) throw new IllegalArgumentException("bad sizes");
    RocksDB.loadLibrary();
    List<List<Write>> records = new ArrayList<>();
    for (int p = 0; p < partitions; ++p) records.add(load(a.get("records-dir") + "/p" + p + ".bin"));
    List<RocksDB> dbs = new ArrayList<>();
    try (Options options = kafkaStreamsOptions();
        WriteOptions noWal = new WriteOptions().setDisableWAL(true)) {
      for (int p = 0; p < partitions; ++p) dbs.add(RocksDB.open(options, a.get("db-dir") + "/p" + p));
      long written = 0;
      final long start = System.nanoTime();
      final long cpuStart = cpuNs();
      for (int p = 0; p < partitions; ++p) {
        final List<Write> writes = records.get(p);
        for (int at = 0; at < writes.size(); at += batchRecords) {
          try (WriteBatch batch = new WriteBatch()) {
            for (int i = at; i < Math.min(writes.size(), at + batchRecords); ++i) {
              Write w = writes.get(i);
              if (w.value() == null) {
                batch.delete(w.key());
              } else {
                batch.put(w.key(), w.value());
              }
            }
            dbs.get(p).write(noWal, batch);
          }
          written += Math.min(batchRecords, writes.size() - at);
        }
      }
      final double seconds = (System.nanoTime() - start) / 1e9;
      final double cpuSeconds = (cpuNs() - cpuStart) / 1e9;
      StringBuilder stores = new StringBuilder();
      for (int p = 0; p < partitions; ++p) {
        long hash = FNV_OFFSET;
        long entries = 0;
        try (RocksIterator it = dbs.get(p).newIterator()) {
          for (it.seekToFirst(); it.isValid(); it.next()) {
            hash = RestorePeer.digestAdd(RestorePeer.digestAdd(hash, it.key()), it.value());
            ++entries;
          }
        }
        if (p > 0) stores.append(',');
        stores.append(String.format(
            "{\"partition\":%d,\"entries\":%d,\"hash\":\"%016x\"}", p, entries, hash));
      }
      for (RocksDB db : dbs) db.close();
      System.out.println(String.format(
          "{\"records\":%d,\"seconds\":%.6f,\"cpu_seconds\":%.6f,\"rocksdb_version\":\"%s\","
              + "\"stores\":[%s]}",
          written, seconds, cpuSeconds, RocksDB.rocksdbVersion(), stores));
    }
  }
}
