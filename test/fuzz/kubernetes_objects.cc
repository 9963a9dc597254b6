// Fuzz target: the Kubernetes API answers the node's startup taint removal reads (a Node, a
// CSINode). The first byte picks the reader. Invariants: nothing crashes or throws; a patch is
// produced only for a Node that carries csi.oxide.computer/agent-not-ready, and it is a `test` of
// the taints as read followed by a `replace` with fewer taints, none of them that one.
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz_target.h"
#include "node/startup_taint_steps.h"

namespace {

bool IsTheTaint(const nlohmann::json& taint) {
  return taint.is_object() && taint.contains("key") &&
         taint["key"] == oxide::node::kAgentNotReadyTaint;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 2 == 0) {
    auto patch = oxide::node::TaintRemovalPatch(text);
    if (patch.ok() && patch->has_value()) {
      const nlohmann::json ops = nlohmann::json::parse(**patch, nullptr, false);
      Expect(ops.is_array() && ops.size() == 2);
      Expect(ops[0]["op"] == "test" && ops[1]["op"] == "replace");
      const nlohmann::json& before = ops[0]["value"];
      const nlohmann::json& after = ops[1]["value"];
      Expect(before.is_array() && after.is_array() && after.size() < before.size());
      bool had = false;
      for (const auto& taint : before)
        had = had || IsTheTaint(taint);
      Expect(had);
      for (const auto& taint : after)
        Expect(!IsTheTaint(taint));
    }
  } else {
    (void)oxide::node::CsiNodeListsDriver(text, "csi.oxide.computer");
  }
  return 0;
}
