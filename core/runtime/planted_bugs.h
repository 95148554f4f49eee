// Planted bugs: deliberate, documented departures from the correct runtime, all off by
// default. Each re-creates a hazard named in the KAFKA-10199 review (../shared/seeds/000_…) so
// that `bug.*` scenarios can show the harness finds it, replays it, shrinks it and draws its
// timeline — and so the zoo of historical Kafka bugs has a place to live. Nothing but scenarios
// and tests turns them on.
#ifndef RESTORESIM_CORE_RUNTIME_PLANTED_BUGS_H_
#define RESTORESIM_CORE_RUNTIME_PLANTED_BUGS_H_

namespace restoresim {

struct PlantedBugs {
  // The restore thread applies a round's CREATE items before its CLOSE items, so a recycle or
  // revive registers the new incarnation's changelogs while the old one still has them
  // ("drain the closed tasks before the created ones" in the review).
  bool create_before_close = false;
  // Closing a running task sends its CLOSE without the changelogs captured before its stores
  // were cleared, so the restore thread never unregisters them (the review's "materialise the
  // changelog partitions before clearing" hazard). The restore thread then unregisters only
  // what a CLOSE names, as in the seed's design: its own defence — a CLOSE also unregisters
  // everything its incarnation registered — would otherwise hide the bug entirely.
  bool forget_changelogs_on_close = false;

  bool any() const { return create_before_close || forget_changelogs_on_close; }
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_PLANTED_BUGS_H_
