#include "core/transport/transport_wrapper.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace restoresim {
namespace {

using ::testing::_;
using ::testing::Return;

const TopicPartition kTp{"t", 0};

class MockRestoreConsumer : public RestoreConsumer {
 public:
  MOCK_METHOD(absl::Status, Assign, (const std::vector<TopicPartition>&), (override));
  MOCK_METHOD(absl::Status, Unassign, (), (override));
  MOCK_METHOD(std::vector<TopicPartition>, Assignment, (), (const, override));
  MOCK_METHOD(absl::Status, Seek, (const TopicPartition&, int64_t), (override));
  MOCK_METHOD(absl::Status, SeekToBeginning, (const std::vector<TopicPartition>&), (override));
  MOCK_METHOD(absl::Status, SeekToEnd, (const std::vector<TopicPartition>&), (override));
  MOCK_METHOD(absl::StatusOr<int64_t>, Position, (const TopicPartition&), (override));
  MOCK_METHOD(absl::Status, Pause, (const std::vector<TopicPartition>&), (override));
  MOCK_METHOD(absl::Status, Resume, (const std::vector<TopicPartition>&), (override));
  MOCK_METHOD(std::vector<TopicPartition>, Paused, (), (const, override));
  MOCK_METHOD(absl::StatusOr<PollResult>, Poll, (TimeNs), (override));
  MOCK_METHOD(void, Close, (), (override));
  MOCK_METHOD(void, Destroyed, ());
  ~MockRestoreConsumer() override { Destroyed(); }
};

class MockTransactionalProducer : public TransactionalProducer {
 public:
  MOCK_METHOD(absl::Status, Send,
              (const TopicPartition&, std::string, std::optional<std::string>, int64_t),
              (override));
  MOCK_METHOD((absl::StatusOr<std::map<TopicPartition, int64_t>>), Flush, (TimeNs), (override));
  MOCK_METHOD(void, Close, (), (override));
  MOCK_METHOD(absl::Status, InitTransactions, (TimeNs), (override));
  MOCK_METHOD(absl::Status, BeginTransaction, (), (override));
  MOCK_METHOD(absl::Status, SendOffsetsToTransaction,
              ((const std::map<TopicPartition, int64_t>&), const ConsumerGroupMetadata&),
              (override));
  MOCK_METHOD(absl::Status, CommitTransaction, (TimeNs), (override));
  MOCK_METHOD(absl::Status, AbortTransaction, (TimeNs), (override));
};

// Counts the hooks and checks that every call to the target runs between them.
class CountingConsumer final : public RestoreConsumerWrapper {
 public:
  explicit CountingConsumer(RestoreConsumer* target) : RestoreConsumerWrapper(target) {}
  int begun = 0;
  int ended = 0;
  bool inside = false;

 protected:
  void BeginCall() override {
    EXPECT_FALSE(inside) << "calls do not nest";
    ++begun;
    inside = true;
  }
  void EndCall() override {
    EXPECT_TRUE(inside);
    ++ended;
    inside = false;
  }
};

TEST(TransportWrapperTest, EveryRestoreConsumerCallIsForwardedBetweenTheHooks) {
  MockRestoreConsumer target;
  CountingConsumer w(&target);
  EXPECT_CALL(target, Assign(std::vector<TopicPartition>{kTp}))
      .WillOnce([&](const auto&) {
        EXPECT_TRUE(w.inside);
        return absl::OkStatus();
      });
  EXPECT_CALL(target, Unassign()).WillOnce(Return(absl::UnavailableError("x")));
  EXPECT_CALL(target, Assignment()).WillOnce(Return(std::vector<TopicPartition>{kTp}));
  EXPECT_CALL(target, Seek(kTp, 7)).WillOnce(Return(absl::OkStatus()));
  EXPECT_CALL(target, SeekToBeginning(_)).WillOnce(Return(absl::OkStatus()));
  EXPECT_CALL(target, SeekToEnd(_)).WillOnce(Return(absl::OkStatus()));
  EXPECT_CALL(target, Position(kTp)).WillOnce(Return(absl::StatusOr<int64_t>(42)));
  EXPECT_CALL(target, Pause(_)).WillOnce(Return(absl::OkStatus()));
  EXPECT_CALL(target, Resume(_)).WillOnce(Return(absl::OkStatus()));
  EXPECT_CALL(target, Paused()).WillOnce(Return(std::vector<TopicPartition>{}));
  EXPECT_CALL(target, Poll(5)).WillOnce(Return(absl::StatusOr<PollResult>(PollResult{})));
  EXPECT_CALL(target, Close());
  EXPECT_CALL(target, Destroyed());

  EXPECT_TRUE(w.Assign({kTp}).ok());
  EXPECT_TRUE(absl::IsUnavailable(w.Unassign())) << "errors come back unchanged";
  EXPECT_EQ(static_cast<const RestoreConsumer&>(w).Assignment().size(), 1u);
  EXPECT_TRUE(w.Seek(kTp, 7).ok());
  EXPECT_TRUE(w.SeekToBeginning({kTp}).ok());
  EXPECT_TRUE(w.SeekToEnd({kTp}).ok());
  EXPECT_EQ(*w.Position(kTp), 42);
  EXPECT_TRUE(w.Pause({kTp}).ok());
  EXPECT_TRUE(w.Resume({kTp}).ok());
  EXPECT_TRUE(w.Paused().empty());
  EXPECT_TRUE(w.Poll(5).ok());
  w.Close();
  EXPECT_EQ(w.begun, 12);
  EXPECT_EQ(w.ended, 12);
}

// A decorator overrides one call; the rest still reach the target, and an owned target goes
// with its wrapper.
TEST(TransportWrapperTest, AnOverriddenCallIsNotForwardedAndAnOwnedTargetIsDestroyed) {
  class Refusing final : public RestoreConsumerWrapper {
   public:
    using RestoreConsumerWrapper::RestoreConsumerWrapper;
    absl::Status Unassign() override { return absl::PermissionDeniedError("refused"); }
  };
  auto owned = std::make_unique<MockRestoreConsumer>();
  MockRestoreConsumer& target = *owned;
  EXPECT_CALL(target, Unassign()).Times(0);
  EXPECT_CALL(target, Assign(_)).WillOnce(Return(absl::OkStatus()));
  {
    Refusing w(std::move(owned));
    EXPECT_TRUE(absl::IsPermissionDenied(w.Unassign()));
    EXPECT_TRUE(w.Assign({kTp}).ok());
    EXPECT_CALL(target, Destroyed());
  }
}

TEST(TransportWrapperTest, ATransactionalProducerForwardsTheProducerCallsToo) {
  MockTransactionalProducer target;
  TransactionalProducerWrapper w(&target);
  EXPECT_CALL(target, Send(kTp, "k", std::optional<std::string>("v"), 3))
      .WillOnce(Return(absl::OkStatus()));
  EXPECT_CALL(target, Flush(9)).WillOnce(Return(std::map<TopicPartition, int64_t>{{kTp, 4}}));
  EXPECT_CALL(target, InitTransactions(1)).WillOnce(Return(absl::OkStatus()));
  EXPECT_CALL(target, BeginTransaction()).WillOnce(Return(absl::OkStatus()));
  EXPECT_CALL(target, SendOffsetsToTransaction(_, _)).WillOnce(Return(absl::OkStatus()));
  EXPECT_CALL(target, CommitTransaction(2)).WillOnce(Return(absl::AbortedError("fenced")));
  EXPECT_CALL(target, AbortTransaction(3)).WillOnce(Return(absl::OkStatus()));
  EXPECT_CALL(target, Close());
  EXPECT_TRUE(w.Send(kTp, "k", "v", 3).ok());
  EXPECT_EQ(w.Flush(9)->at(kTp), 4);
  EXPECT_TRUE(w.InitTransactions(1).ok());
  EXPECT_TRUE(w.BeginTransaction().ok());
  EXPECT_TRUE(w.SendOffsetsToTransaction({{kTp, 1}}, ConsumerGroupMetadata{}).ok());
  EXPECT_TRUE(absl::IsAborted(w.CommitTransaction(2)));
  EXPECT_TRUE(w.AbortTransaction(3).ok());
  w.Close();
}

// A wrapper whose target is chosen per call (a lazy connection) sees Target() inside the hooks.
TEST(TransportWrapperTest, TargetIsAskedForInsideTheCallScope) {
  class Lazy final : public RestoreConsumerWrapper {
   public:
    explicit Lazy(MockRestoreConsumer& real)
        : RestoreConsumerWrapper(static_cast<RestoreConsumer*>(nullptr)), real_(real) {}
    int connects = 0;
    bool inside = false;

   protected:
    void BeginCall() override { inside = true; }
    void EndCall() override { inside = false; }
    RestoreConsumer& Target() override {
      EXPECT_TRUE(inside) << "Target() is asked for inside the call's scope";
      ++connects;
      return real_;
    }

   private:
    MockRestoreConsumer& real_;
  };
  MockRestoreConsumer real;
  Lazy w(real);
  EXPECT_CALL(real, Paused()).WillOnce(Return(std::vector<TopicPartition>{kTp}));
  EXPECT_EQ(static_cast<const RestoreConsumer&>(w).Paused().size(), 1u);
  EXPECT_EQ(w.connects, 1);
  EXPECT_CALL(real, Destroyed());
}

TEST(TransportWrapperDeathTest, AWrapperWithoutATargetThatDoesNotChooseOneFails) {
  RestoreConsumerWrapper w(static_cast<RestoreConsumer*>(nullptr));
  EXPECT_DEATH((void)w.Unassign(), "without a target");
}

}  // namespace
}  // namespace restoresim
