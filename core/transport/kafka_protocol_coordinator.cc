// FindCoordinator (key 10) v4–v6, which share one layout: the group coordinator a streams-group
// member must talk to. Declared in kafka_protocol_messages.h.
#include <fmt/format.h>

#include "core/transport/kafka_protocol_messages.h"
#include "core/transport/kafka_protocol_structs.h"
#include "core/util/check.h"

namespace restoresim::kafka_protocol {

using namespace internal;  // NOLINT(build/namespaces): the codec's own helpers

std::string Encode(const FindCoordinatorRequest& m, int16_t version) {
  RS_CHECK(Speaks(kFindCoordinatorVersions, version), "FindCoordinator v4 to v6");
  Writer w;
  w.Int8(m.key_type);
  WriteStrings(w, m.coordinator_keys);
  w.TaggedFields(m.tagged_fields);
  return w.Take();
}

absl::StatusOr<FindCoordinatorRequest> DecodeFindCoordinatorRequest(std::string_view b,
                                                                    int16_t v) {
  if (!Speaks(kFindCoordinatorVersions, v)) return Unspoken("FindCoordinatorRequest", v);
  Reader r(b);
  FindCoordinatorRequest m;
  m.key_type = r.Int8();
  m.coordinator_keys = ReadStrings(r);
  m.tagged_fields = r.TaggedFields();
  return Finish(r, std::move(m));
}

std::string Encode(const FindCoordinatorResponse& m, int16_t version) {
  RS_CHECK(Speaks(kFindCoordinatorVersions, version), "FindCoordinator v4 to v6");
  Writer w;
  w.Int32(m.throttle_time_ms);
  WriteArray(w, m.coordinators, [](Writer& x, const Coordinator& c) {
    x.CompactString(c.key);
    x.Int32(c.node_id);
    x.CompactString(c.host);
    x.Int32(c.port);
    x.Int16(c.error_code);
    x.CompactNullableString(c.error_message);
    x.NoTaggedFields();
  });
  w.TaggedFields(m.tagged_fields);
  return w.Take();
}

absl::StatusOr<FindCoordinatorResponse> DecodeFindCoordinatorResponse(std::string_view b,
                                                                      int16_t v) {
  if (!Speaks(kFindCoordinatorVersions, v)) return Unspoken("FindCoordinatorResponse", v);
  Reader r(b);
  FindCoordinatorResponse m;
  m.throttle_time_ms = r.Int32();
  // Each coordinator takes at least 1 + 4 + 1 + 4 + 2 + 1 + 1 bytes.
  m.coordinators = ReadArray<Coordinator>(r, 14, [](Reader& x) {
    Coordinator c;
    c.key = x.CompactString();
    c.node_id = x.Int32();
    c.host = x.CompactString();
    c.port = x.Int32();
    c.error_code = x.Int16();
    c.error_message = x.CompactNullableString();
    x.TaggedFields();
    return c;
  });
  m.tagged_fields = r.TaggedFields();
  return Finish(r, std::move(m));
}

}  // namespace restoresim::kafka_protocol
