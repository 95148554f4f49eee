// SuspendableTransport: the transport clients of one runtime instance as a checkpoint resource
// (core/port/checkpoint_context.h). It forwards every call to an inner Transport, and:
//
//  BeforeCheckpoint  waits until no call is in flight, then closes every client's connection
//                    (the inner client is closed and dropped). From here until AfterRestore a
//                    call waits at the gate: it never fails and never reaches the broker.
//  AfterRestore      takes a fresh process identity (so two instances restored from one image
//                    never share a client id) and opens the gate. Each client reconnects
//                    lazily, on the first call of its owner thread after the restore, under
//                    its new client id: the restore consumer re-assigns, re-seeks its cached
//                    positions (a position the broker no longer has becomes an out-of-range
//                    report, the corruption path) and re-pauses; the main consumer joins the
//                    group as a new member and first reports its old partitions lost (another
//                    member may have owned them while it was frozen); the producer and admin
//                    client are simply new; a transactional producer is new too and, if it
//                    had been initialised, initialises its transactional id again (fencing
//                    the image's producer; a transaction open across the checkpoint is lost).
//
// Client ids on the wire are "<application.id>-<process id>-<base>", where base is the id the
// runtime asked for minus the instance prefix (a local name that is not part of the image's
// identity), as Kafka Streams names its clients after its process UUID.
//
// Thread-safety: the Transport methods and the resource callbacks may be called from any
// thread; each client, as every transport client, by one thread at a time.
#ifndef RESTORESIM_CORE_RUNTIME_SUSPENDABLE_TRANSPORT_H_
#define RESTORESIM_CORE_RUNTIME_SUSPENDABLE_TRANSPORT_H_

#include <memory>
#include <string>
#include <vector>

#include "core/port/checkpoint_context.h"
#include "core/sync/condvar.h"
#include "core/sync/mutex.h"
#include "core/transport/transport.h"

namespace restoresim {

class SuspendableTransport final : public Transport, public CheckpointResource {
 public:
  struct Options {
    std::string instance;        // the runtime instance, for observers ("" for one instance)
    std::string application_id;  // first part of every wire client id
    std::string local_prefix;    // stripped from requested client ids ("<instance>-")
    std::string process_id;      // the image's identity; replaced at every restore
    bool start_suspended = false;  // an instance started from an image: connects at restore
  };
  // One client of this transport, as the transport sees it (client wrappers implement it).
  class Client {
   public:
    virtual ~Client() = default;
    // On the checkpointing thread, the gate closed and nothing in flight: close the connection
    // and keep what a reconnect needs.
    virtual void Disconnect() = 0;
  };

  SuspendableTransport(Transport& inner, Options options);
  ~SuspendableTransport() override;

  std::unique_ptr<RestoreConsumer> NewRestoreConsumer(const ConsumerConfig& config) override;
  std::unique_ptr<MainConsumer> NewMainConsumer(const std::string& group,
                                                const ConsumerConfig& config) override;
  std::unique_ptr<Admin> NewAdmin(const std::string& client_id) override;
  std::unique_ptr<Producer> NewProducer(const std::string& client_id) override;
  std::unique_ptr<TransactionalProducer> NewTransactionalProducer(
      const TransactionalProducerConfig& config) override;

  std::string ResourceName() const override { return "transport"; }
  absl::Status BeforeCheckpoint(CheckpointContext& context) override;
  absl::Status AfterRestore(CheckpointContext& context) override;

  // Sets the identity the next AfterRestore takes (drawn by the runtime from its reseeded
  // randomness). REQUIRES: called before AfterRestore of the cycle it is for.
  void SetNextProcessId(std::string process_id);
  std::string process_id() const;
  bool suspended() const;

  // For client wrappers: a call's entry (waits while suspended; returns the connection epoch
  // the call runs in) and exit.
  uint64_t Enter();
  void Exit();
  // The wire id of a requested client id under the current identity.
  std::string WireId(const std::string& requested) const;
  const Options& options() const { return options_; }
  Transport& inner() { return inner_; }
  void Forget(Client* client);

 private:
  void Track(Client* client);

  Transport& inner_;
  Options options_;
  mutable Mutex mu_{"suspendable_transport_mu"};
  CondVar cv_{"suspendable_transport_cv"};
  bool suspended_ ABSL_GUARDED_BY(mu_) = false;
  int64_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;  // connections opened under this identity
  std::string process_id_ ABSL_GUARDED_BY(mu_);
  std::string next_process_id_ ABSL_GUARDED_BY(mu_);
  std::vector<Client*> clients_ ABSL_GUARDED_BY(mu_);
};

// RAII for one call through the gate.
class GateCall {
 public:
  explicit GateCall(SuspendableTransport& t) : t_(t), epoch_(t.Enter()) {}
  ~GateCall() { t_.Exit(); }
  uint64_t epoch() const { return epoch_; }

 private:
  SuspendableTransport& t_;
  uint64_t epoch_;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_SUSPENDABLE_TRANSPORT_H_
