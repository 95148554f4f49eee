// TopologyPause: whether the tasks of one named topology are paused (Kafka's
// TopologyMetadata.pauseTopology / resumeTopology / isPaused, KIP-834; "" is the unnamed
// topology). One per runtime instance, shared by its stream threads and restore threads, which
// read it once per loop iteration: a restore thread pauses the tasks it owns (they leave the
// changelog reader, keep their stores, are checkpointed) and resumes them; a stream thread
// stops processing its paused running actives (their input partitions paused on the main
// consumer) but still commits them. A pause therefore takes effect at each thread's next
// iteration; the oracle (properties/checks/paused_tasks.cc) holds every thread that began an
// iteration after the pause to it.
//
// Neither reads nor writes are scheduling points (an atomic flag; the report to observers
// follows the store with nothing in between): a run that never pauses schedules exactly as
// before, and observers see the change exactly where it happened.
//
// Thread-safety: thread-safe; any thread may set or read it (concurrent Sets: the last wins).
#ifndef RESTORESIM_CORE_RUNTIME_TOPOLOGY_PAUSE_H_
#define RESTORESIM_CORE_RUNTIME_TOPOLOGY_PAUSE_H_

#include <atomic>
#include <string>
#include <vector>

namespace restoresim {

class TopologyPause {
 public:
  explicit TopologyPause(std::string topology = "") : topology_(std::move(topology)) {}
  TopologyPause(const TopologyPause&) = delete;
  TopologyPause& operator=(const TopologyPause&) = delete;

  // The topology's name ("": the unnamed topology).
  const std::string& topology() const { return topology_; }
  // Pauses (or resumes) the topology; `threads` are the stream and restore threads that read
  // the flag, named for observers (the oracle holds them to the pause).
  void Set(bool paused, const std::vector<std::string>& threads);
  bool paused() const { return paused_.load(std::memory_order_acquire); }

 private:
  const std::string topology_;
  std::atomic<bool> paused_{false};
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_TOPOLOGY_PAUSE_H_
