#!/usr/bin/env bash
# The RocksDB store's tests again on Kafka Streams' own RocksDB (rocksdb_library.h): the native
# library of the rocksdbjni jar the Kafka Streams peer depends on (tools/kafka/peer
# rocksdb-library, which builds the peer with Maven first: hence the kafka suite). Each test
# binary also checks that the library it ran on is the one named (RocksDbLibraryTest).
#
#   kafka/rocksdb_peer_library_test.sh PEER_TOOL BUILD_DIR TEST_BINARY...
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 PEER_TOOL BUILD_DIR TEST_BINARY..." >&2; exit 2; }
peer="$1"; build="$2"; shift 2
lib="$("$peer" --build "$build" rocksdb-library)"
[ -f "$lib" ] || { echo "no RocksDB library at '$lib'" >&2; exit 1; }
echo "RESTORESIM_ROCKSDB_LIBRARY=$lib"
export RESTORESIM_ROCKSDB_LIBRARY="$lib"
for test in "$@"; do
  echo "== $test"
  "$test"
done
