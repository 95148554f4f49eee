#include "properties/checks/checkers.h"

namespace restoresim::properties {

std::vector<std::unique_ptr<Checker>> AllCheckers(OracleContext& context) {
  std::vector<std::unique_ptr<Checker>> all;
  for (auto make : {NewSingleOwnerChecker, NewFailedTasksChecker, NewRegistrationChecker,
                    NewAssignmentChecker,
                    NewCheckpointChecker, NewCheckpointProgressChecker,
                    NewThreadConfinementChecker, NewReaderModeChecker, NewLivenessBoundsChecker,
                    NewRunningGateChecker, NewListenerPairingChecker, NewWastedWorkChecker,
                    NewStoreContentsChecker, NewErrorsChecker, NewRestoreProgressChecker,
                    NewCheckpointRestoreChecker, NewStoppedProcessingChecker,
                    NewPausedTasksChecker, NewEosCheckpointChecker, NewEosRestoredBatchChecker,
                    NewClientCloseChecker, NewCommitCheckpointChecker}) {
    all.push_back(make(context));
  }
  return all;
}

}  // namespace restoresim::properties
