// A Kafka admin client that tells tools/kafka/broker when a cluster is ready: it asks for the
// cluster's metadata until `brokers` brokers answer and the finalized feature streams.version
// (streams groups, KIP-1071) is 1 or more, within `timeout_s` seconds. Run as a
// single-file program on the broker's own classpath (kafka-clients is one of its jars):
//
//   java -cp 'build/kafka/lib/*' tools/kafka/ClusterProbe.java HOST:PORT[,...] BROKERS TIMEOUT_S
//
// Exit 0: ready (prints the broker ids and streams.version); 1: not ready in time (prints the
// last error).
import java.time.Duration;
import java.util.Collection;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.common.Node;

public class ClusterProbe {
  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    int brokers = Integer.parseInt(args[1]);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(args[2]));
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "2000");
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "2000");
    props.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "200");
    String last = "no answer";
    try (Admin admin = Admin.create(props)) {
      while (System.nanoTime() < deadline) {
        try {
          Collection<Node> nodes = admin.describeCluster(
              new DescribeClusterOptions().timeoutMs(2000)).nodes().get(3, TimeUnit.SECONDS);
          FinalizedVersionRange streams = admin.describeFeatures().featureMetadata()
              .get(3, TimeUnit.SECONDS).finalizedFeatures().get("streams.version");
          if (nodes.size() >= brokers && streams != null && streams.maxVersionLevel() >= 1) {
            StringBuilder ids = new StringBuilder();
            for (Node n : nodes) ids.append(ids.length() == 0 ? "" : ",").append(n.id());
            System.out.println("ready: brokers " + ids + ", streams.version "
                + streams.maxVersionLevel());
            return;
          }
          last = nodes.size() + " of " + brokers + " brokers, streams.version "
              + (streams == null ? "not finalized" : streams.maxVersionLevel());
        } catch (Exception e) {
          last = e.toString();
        }
        Thread.sleep(200);
      }
    }
    System.out.println("not ready: " + last);
    System.exit(1);
  }
}
