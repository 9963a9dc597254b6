// The recorded kube-apiserver exchange of the startup taint removal
// (test/node/data/startup_taint_exchange.json; written from kube-apiserver's source, not captured
// from a live server, which cannot run here): its parts as JSON, and as answers for
// support/fake_kubernetes_api.h to replay. Test thread only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "support/fake_kubernetes_api.h"

namespace oxide::testing {

// The whole file, parsed once.
const nlohmann::json& RecordedExchange();
// A 200 answer whose body is the part `name` (a Node or CSINode).
FakeKubernetesApi::Answer RecordedObject(const std::string& name);
// The answer recorded as `name` ({"status": ..., "body": ...}).
FakeKubernetesApi::Answer RecordedAnswer(const std::string& name);

}  // namespace oxide::testing
