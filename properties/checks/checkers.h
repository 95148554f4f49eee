// The oracle's checkers, one invariant each (docs/DESIGN.md, "The invariant oracle").
#ifndef RESTORESIM_PROPERTIES_CHECKS_CHECKERS_H_
#define RESTORESIM_PROPERTIES_CHECKS_CHECKERS_H_

#include <memory>

#include "properties/checker.h"

namespace restoresim::properties {

std::unique_ptr<Checker> NewSingleOwnerChecker(OracleContext& context);
std::unique_ptr<Checker> NewRegistrationChecker(OracleContext& context);
std::unique_ptr<Checker> NewAssignmentChecker(OracleContext& context);
std::unique_ptr<Checker> NewCheckpointChecker(OracleContext& context);
std::unique_ptr<Checker> NewCheckpointProgressChecker(OracleContext& context);
std::unique_ptr<Checker> NewThreadConfinementChecker(OracleContext& context);
std::unique_ptr<Checker> NewReaderModeChecker(OracleContext& context);
std::unique_ptr<Checker> NewLivenessBoundsChecker(OracleContext& context);
std::unique_ptr<Checker> NewRunningGateChecker(OracleContext& context);
std::unique_ptr<Checker> NewListenerPairingChecker(OracleContext& context);
std::unique_ptr<Checker> NewWastedWorkChecker(OracleContext& context);
std::unique_ptr<Checker> NewStoreContentsChecker(OracleContext& context);
std::unique_ptr<Checker> NewErrorsChecker(OracleContext& context);
std::unique_ptr<Checker> NewRestoreProgressChecker(OracleContext& context);
std::unique_ptr<Checker> NewCheckpointRestoreChecker(OracleContext& context);
std::unique_ptr<Checker> NewStoppedProcessingChecker(OracleContext& context);
std::unique_ptr<Checker> NewFailedTasksChecker(OracleContext& context);
std::unique_ptr<Checker> NewPausedTasksChecker(OracleContext& context);
std::unique_ptr<Checker> NewEosCheckpointChecker(OracleContext& context);
std::unique_ptr<Checker> NewEosRestoredBatchChecker(OracleContext& context);
std::unique_ptr<Checker> NewClientCloseChecker(OracleContext& context);
std::unique_ptr<Checker> NewCommitCheckpointChecker(OracleContext& context);

}  // namespace restoresim::properties

#endif  // RESTORESIM_PROPERTIES_CHECKS_CHECKERS_H_
