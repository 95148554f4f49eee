#include "core/runtime/suspendable_transport.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/runtime/runtime_observer.h"
#include "core/transport/transport_wrapper.h"
#include "core/util/check.h"
#include "core/util/run_context.h"

namespace restoresim {

SuspendableTransport::SuspendableTransport(Transport& inner, Options options)
    : inner_(inner), options_(std::move(options)) {
  RS_CHECK(!options_.process_id.empty(), "a suspendable transport needs a process id");
  MutexLock lock(mu_);
  process_id_ = options_.process_id;
  suspended_ = options_.start_suspended;
}

SuspendableTransport::~SuspendableTransport() {
  MutexLock lock(mu_);
  RS_CHECK(clients_.empty(), "transport destroyed with {} clients left", clients_.size());
}

uint64_t SuspendableTransport::Enter() {
  MutexLock lock(mu_);
  // A call while suspended waits until the restore (the frozen process would not run it).
  while (suspended_) cv_.Wait(mu_);
  ++in_flight_;
  return epoch_;
}

void SuspendableTransport::Exit() {
  MutexLock lock(mu_);
  RS_CHECK(in_flight_ > 0, "transport call exits without entering");
  if (--in_flight_ == 0) cv_.NotifyAll();
}

std::string SuspendableTransport::WireId(const std::string& requested) const {
  std::string base = requested;
  if (!options_.local_prefix.empty() && base.starts_with(options_.local_prefix)) {
    base = base.substr(options_.local_prefix.size());
  }
  MutexLock lock(mu_);
  return fmt::format("{}-{}-{}", options_.application_id, process_id_, base);
}

void SuspendableTransport::Track(Client* client) {
  MutexLock lock(mu_);
  clients_.push_back(client);
}

void SuspendableTransport::Forget(Client* client) {
  MutexLock lock(mu_);
  clients_.erase(std::remove(clients_.begin(), clients_.end(), client), clients_.end());
}

void SuspendableTransport::SetNextProcessId(std::string process_id) {
  MutexLock lock(mu_);
  next_process_id_ = std::move(process_id);
}

std::string SuspendableTransport::process_id() const {
  MutexLock lock(mu_);
  return process_id_;
}

bool SuspendableTransport::suspended() const {
  MutexLock lock(mu_);
  return suspended_;
}

absl::Status SuspendableTransport::BeforeCheckpoint(CheckpointContext&) {
  // Mutation checkpoint-keeps-connections: the connections stay open and calls go through.
  if (RS_MUTANT(kCheckpointKeepsConnections)) return absl::OkStatus();
  std::vector<Client*> clients;
  {
    MutexLock lock(mu_);
    if (suspended_) {
      // Only an instance started from an image is suspended before its first checkpoint.
      RS_CHECK(options_.start_suspended && epoch_ == 0, "transport suspended twice");
      return absl::OkStatus();
    }
    suspended_ = true;
    while (in_flight_ > 0) cv_.Wait(mu_);  // calls in flight finish; new ones wait
    clients = clients_;
  }
  for (Client* c : clients) c->Disconnect();
  return absl::OkStatus();
}

absl::Status SuspendableTransport::AfterRestore(CheckpointContext&) {
  MutexLock lock(mu_);
  RS_CHECK_EQ(in_flight_, 0, "a call in flight while the transport was suspended");
  // Mutation clones-keep-identity: the image's identity stays.
  if (!next_process_id_.empty() && !RS_MUTANT(kClonesKeepIdentity)) {
    process_id_ = std::move(next_process_id_);
  }
  next_process_id_.clear();
  ++epoch_;
  suspended_ = false;
  cv_.NotifyAll();
  return absl::OkStatus();
}

// ---- the clients ----
namespace {

// What every client shares, on top of its interface's forwarding wrapper (transport_wrapper.h):
// each forwarded call passes the gate (BeginCall/EndCall) and goes to the connection, opened
// on the calling (owner) thread when there is none (Target); the connection's observer reports.
// Only the calls that keep something for a reconnect are written out below.
template <typename Forwarding, typename Inner>
class Wrapped : public Forwarding, public SuspendableTransport::Client {
 public:
  Wrapped(SuspendableTransport& t, std::string requested)
      : Forwarding(static_cast<Inner*>(nullptr)), t_(t), requested_(std::move(requested)) {}

 protected:
  void BeginCall() override { t_.Enter(); }
  void EndCall() override { t_.Exit(); }
  Inner& Target() override { return Connected(); }

  // REQUIRES: inside a GateCall. Connects on the calling (owner) thread when needed.
  Inner& Connected() {
    if (inner_ == nullptr) {
      wire_id_ = t_.WireId(requested_);
      // Announced before the connection's first broker call: the identity comes first.
      RS_OBSERVE(OnClientConnection, t_.options().instance, requested_, wire_id_, true);
      inner_ = Open(wire_id_);
      RS_CHECK(inner_ != nullptr, "transport returned no client for {}", wire_id_);
      AfterConnect(*inner_);
    }
    return *inner_;
  }
  void DropConnection() {
    if (inner_ == nullptr) return;
    inner_.reset();
    RS_OBSERVE(OnClientConnection, t_.options().instance, requested_, wire_id_, false);
  }
  // Closes the connection for good (the owner's Close), through the gate.
  void CloseConnection() {
    GateCall call(t_);
    if (inner_ != nullptr) inner_->Close();
    DropConnection();
  }
  virtual std::unique_ptr<Inner> Open(const std::string& wire_id) = 0;
  virtual void AfterConnect(Inner&) {}

  SuspendableTransport& t_;
  const std::string requested_;
  std::string wire_id_;
  std::unique_ptr<Inner> inner_;
};

class SuspendableRestoreConsumer final
    : public Wrapped<RestoreConsumerWrapper, RestoreConsumer> {
 public:
  SuspendableRestoreConsumer(SuspendableTransport& t, ConsumerConfig config)
      : Wrapped(t, config.client_id), config_(std::move(config)) {}
  ~SuspendableRestoreConsumer() override {
    t_.Forget(this);
    DropConnection();
  }

  void Close() override {
    closed_ = true;
    CloseConnection();
  }

  // Keeps the assignment, each position (resolving pending seeks) and the paused set.
  void Disconnect() override {
    if (inner_ == nullptr) return;
    assigned_ = inner_->Assignment();
    positions_.clear();
    for (const TopicPartition& tp : assigned_) {
      if (absl::StatusOr<int64_t> pos = inner_->Position(tp); pos.ok()) positions_[tp] = *pos;
    }
    paused_ = inner_->Paused();
    inner_->Close();
    DropConnection();
  }

 private:
  std::unique_ptr<RestoreConsumer> Open(const std::string& wire_id) override {
    ConsumerConfig c = config_;
    c.client_id = wire_id;
    return t_.inner().NewRestoreConsumer(c);
  }
  // Re-applied as it was; a position the log no longer has is reported by the next Poll as
  // out of range (the corruption path), never skipped silently.
  void AfterConnect(RestoreConsumer& c) override {
    if (closed_) return;
    if (assigned_.empty()) return;
    if (!c.Assign(assigned_).ok()) return;  // the reader re-assigns at its next step anyway
    for (const auto& [tp, pos] : positions_) (void)c.Seek(tp, pos);
    if (!paused_.empty()) (void)c.Pause(paused_);
  }

  const ConsumerConfig config_;
  bool closed_ = false;
  std::vector<TopicPartition> assigned_;
  std::map<TopicPartition, int64_t> positions_;
  std::vector<TopicPartition> paused_;
};

class SuspendableMainConsumer final : public Wrapped<MainConsumerWrapper, MainConsumer> {
 public:
  SuspendableMainConsumer(SuspendableTransport& t, std::string group, ConsumerConfig config)
      : Wrapped(t, config.client_id), group_(std::move(group)), config_(std::move(config)) {}
  ~SuspendableMainConsumer() override {
    t_.Forget(this);
    DropConnection();
  }

  absl::Status Subscribe(const std::vector<std::string>& topics,
                         RebalanceListener* listener) override {
    GateCall call(t_);
    MainConsumer& c = Connected();  // first: a reconnect re-subscribes what was subscribed
    topics_ = topics;
    listener_ = listener;
    return c.Subscribe(topics, listener);
  }
  absl::StatusOr<PollResult> Poll(TimeNs timeout_ns) override {
    GateCall call(t_);
    MainConsumer& c = Connected();
    if (!lost_.empty() && listener_ != nullptr) {
      // A new member: what the old one owned may have been someone else's meanwhile.
      std::vector<TopicPartition> lost = std::move(lost_);
      lost_.clear();
      listener_->OnPartitionsLost(lost);
    }
    return c.Poll(timeout_ns);
  }
  absl::Status SetSubscriptionUserData(std::string user_data) override {
    GateCall call(t_);
    user_data_ = user_data;  // a reconnect subscribes with it
    return Connected().SetSubscriptionUserData(std::move(user_data));
  }
  void Close() override {
    closed_ = true;
    CloseConnection();
  }

  // Leaves the group (the connection is gone); remembers what it owned, to report it lost.
  void Disconnect() override {
    if (inner_ == nullptr) return;
    std::vector<TopicPartition> owned = inner_->Assignment();
    lost_.insert(lost_.end(), owned.begin(), owned.end());
    inner_->Close();
    DropConnection();
  }

 private:
  std::unique_ptr<MainConsumer> Open(const std::string& wire_id) override {
    ConsumerConfig c = config_;
    c.client_id = wire_id;
    return t_.inner().NewMainConsumer(group_, c);
  }
  void AfterConnect(MainConsumer& c) override {
    if (closed_ || listener_ == nullptr) return;
    // Rejoins as a new member; a failure surfaces at the next poll as any other would.
    if (!user_data_.empty()) (void)c.SetSubscriptionUserData(user_data_);
    (void)c.Subscribe(topics_, listener_);
  }

  const std::string group_;
  const ConsumerConfig config_;
  std::string user_data_;
  bool closed_ = false;
  std::vector<std::string> topics_;
  RebalanceListener* listener_ = nullptr;
  std::vector<TopicPartition> lost_;
};

class SuspendableAdmin final : public Wrapped<AdminWrapper, Admin> {
 public:
  SuspendableAdmin(SuspendableTransport& t, std::string id) : Wrapped(t, std::move(id)) {}
  ~SuspendableAdmin() override {
    t_.Forget(this);
    DropConnection();
  }
  void Disconnect() override { DropConnection(); }

 private:
  std::unique_ptr<Admin> Open(const std::string& wire_id) override {
    return t_.inner().NewAdmin(wire_id);
  }
};

class SuspendableProducer final : public Wrapped<ProducerWrapper, Producer> {
 public:
  SuspendableProducer(SuspendableTransport& t, std::string id) : Wrapped(t, std::move(id)) {}
  ~SuspendableProducer() override {
    t_.Forget(this);
    DropConnection();
  }

  absl::StatusOr<std::map<TopicPartition, int64_t>> Flush(TimeNs timeout_ns) override {
    GateCall call(t_);
    absl::StatusOr<std::map<TopicPartition, int64_t>> acked = Connected().Flush(timeout_ns);
    if (!acked.ok() || acked_before_.empty()) return acked;
    // Acknowledged by the connection the checkpoint closed: reported with this flush.
    std::map<TopicPartition, int64_t> all = std::move(acked_before_);
    acked_before_.clear();
    for (const auto& [tp, offset] : *acked) all[tp] = offset;
    return all;
  }
  void Close() override { CloseConnection(); }
  // Nothing queued is lost: it is flushed before the connection closes.
  void Disconnect() override {
    if (inner_ == nullptr) return;
    if (auto acked = inner_->Flush(30 * kSecond); acked.ok()) {
      for (const auto& [tp, offset] : *acked) acked_before_[tp] = offset;
    }
    inner_->Close();
    DropConnection();
  }

 private:
  std::unique_ptr<Producer> Open(const std::string& wire_id) override {
    return t_.inner().NewProducer(wire_id);
  }
  std::map<TopicPartition, int64_t> acked_before_;
};

// A transactional producer does not survive a checkpoint: Disconnect closes it (its open
// transaction is left to the broker, which aborts it at the new connection's
// InitTransactions or at its timeout), and the new connection, if the old one was initialised,
// initialises again under the same transactional id — fencing the image's producer, as a
// restarted Kafka Streams thread does. A transaction open across the checkpoint is lost: its
// next call fails as the inner producer says (kFailedPrecondition: not in a transaction).
class SuspendableTransactionalProducer final
    : public Wrapped<TransactionalProducerWrapper, TransactionalProducer> {
 public:
  SuspendableTransactionalProducer(SuspendableTransport& t, TransactionalProducerConfig config)
      : Wrapped(t, config.client_id), config_(std::move(config)) {}
  ~SuspendableTransactionalProducer() override {
    t_.Forget(this);
    DropConnection();
  }

  absl::Status InitTransactions(TimeNs timeout_ns) override {
    GateCall call(t_);
    absl::Status status = Connected().InitTransactions(timeout_ns);
    if (status.ok()) initialised_ = true;
    return status;
  }
  void Close() override { CloseConnection(); }
  void Disconnect() override {
    if (inner_ == nullptr) return;
    inner_->Close();
    DropConnection();
  }

 private:
  std::unique_ptr<TransactionalProducer> Open(const std::string& wire_id) override {
    TransactionalProducerConfig config = config_;
    config.client_id = wire_id;
    return t_.inner().NewTransactionalProducer(config);
  }
  void AfterConnect(TransactionalProducer& p) override {
    // A failure surfaces at the next call, as the inner producer reports it.
    if (initialised_) (void)p.InitTransactions(30 * kSecond);
  }
  const TransactionalProducerConfig config_;
  bool initialised_ = false;
};

}  // namespace

std::unique_ptr<RestoreConsumer> SuspendableTransport::NewRestoreConsumer(
    const ConsumerConfig& config) {
  auto c = std::make_unique<SuspendableRestoreConsumer>(*this, config);
  Track(c.get());
  return c;
}

std::unique_ptr<MainConsumer> SuspendableTransport::NewMainConsumer(const std::string& group,
                                                                    const ConsumerConfig& config) {
  auto c = std::make_unique<SuspendableMainConsumer>(*this, group, config);
  Track(c.get());
  return c;
}

std::unique_ptr<Admin> SuspendableTransport::NewAdmin(const std::string& client_id) {
  auto c = std::make_unique<SuspendableAdmin>(*this, client_id);
  Track(c.get());
  return c;
}

std::unique_ptr<Producer> SuspendableTransport::NewProducer(const std::string& client_id) {
  auto c = std::make_unique<SuspendableProducer>(*this, client_id);
  Track(c.get());
  return c;
}

std::unique_ptr<TransactionalProducer> SuspendableTransport::NewTransactionalProducer(
    const TransactionalProducerConfig& config) {
  auto c = std::make_unique<SuspendableTransactionalProducer>(*this, config);
  Track(c.get());
  return c;
}

}  // namespace restoresim
