// Canonical ids at the CSI boundary: every volume, snapshot and node id in a request that is a
// UUID in any letter case is rewritten to Oxide's lowercase form before any handler sees it, so
// per-volume serialization, the journal and the state database never hold one id in two
// spellings. Fields named volume_id, source_volume_id, snapshot_id and node_id are rewritten at
// any depth (a content source's ids too); anything that is not a UUID is left as it came.
// Any thread (it touches only the message given).
#pragma once

#include <google/protobuf/message.h>

namespace oxide::rpc {

void CanonicalizeIds(google::protobuf::Message* message);

}  // namespace oxide::rpc
