// Settings a Kafka Streams properties file may hold that the runtime does not model: Kafka
// Streams' own (StreamsConfig) and the prefixes under which it passes settings on to its
// clients. RuntimeConfig::FromProperties warns about them and goes on (as Kafka's
// AbstractConfig.logUnused does for keys it does not know), telling "Kafka Streams knows this,
// restoresim ignores it" apart from "nobody knows this" — a typo in a known key's name is
// still reported, as a warning, rather than failing a file that loads in Kafka Streams.
//
// Thread-safety: pure functions over constant tables.
#ifndef RESTORESIM_CORE_RUNTIME_KAFKA_CONFIG_NAMES_H_
#define RESTORESIM_CORE_RUNTIME_KAFKA_CONFIG_NAMES_H_

#include <string>
#include <string_view>

namespace restoresim {

// A StreamsConfig setting of Kafka Streams 4.x that restoresim does not model.
bool IsUnmodelledStreamsSetting(std::string_view key);
// A key under one of the prefixes Kafka Streams passes to its clients ("consumer.",
// "main.consumer.", "restore.consumer.", "global.consumer.", "producer.", "admin.",
// "topic."), or a plain client setting Kafka Streams forwards (bootstrap.servers, ...).
bool IsClientSetting(std::string_view key);
// The warning for a key FromProperties ignores: why it is ignored.
std::string IgnoredSettingWarning(std::string_view key);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_KAFKA_CONFIG_NAMES_H_
