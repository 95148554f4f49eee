// The shrink passes (sim/shrink.h), one file each (shrink_pass_*.cc). Each edits the best run's
// choices into candidates and offers them to the search (sim/shrink_search.h), which adopts the
// first that keeps the failure and is smaller; each returns whether it adopted any. The driver
// (ShrinkRepro in shrink.cc) runs them in this order, round after round, to a fixed point:
//
//   truncate, coalesce, move-preemption, delete-8/4/2/1, quiet-event, lower-data,
//   lower-and-delete, quiet-pick
//
// Thread-safety: as ShrinkSearch (the calling thread).
#ifndef RESTORESIM_SIM_SHRINK_PASSES_H_
#define RESTORESIM_SIM_SHRINK_PASSES_H_

#include <cstddef>

#include "sim/shrink_search.h"

namespace restoresim::sim::shrinking {

// Cuts the choices after a point and lets the quiet fallback run the rest (shrink_pass_truncate).
bool Truncate(ShrinkSearch& search);

// Regroups ranges of thread runs by thread: A B A C B A -> A A A B B C (shrink_pass_coalesce).
bool Coalesce(ShrinkSearch& search);

// Removes one preemption: absorb, pull or push (shrink_pass_move_preemption).
bool MovePreemptions(ShrinkSearch& search);

// Deletes `size` choices from an eventful one or a data choice (shrink_pass_delete_chunks).
bool DeleteChunks(ShrinkSearch& search, size_t size);

// Replaces one choice by its quiet answer: the eventful ones, or the free thread picks
// (shrink_pass_quiet).
bool QuietEach(ShrinkSearch& search, bool eventful);

// Lowers each data choice to the smallest value that keeps the failure (shrink_pass_lower_data).
bool LowerData(ShrinkSearch& search);

// Lowers a count and deletes one of the draws it counts (shrink_pass_lower_and_delete).
bool LowerAndDelete(ShrinkSearch& search);

}  // namespace restoresim::sim::shrinking

#endif  // RESTORESIM_SIM_SHRINK_PASSES_H_
