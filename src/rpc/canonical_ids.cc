#include "rpc/canonical_ids.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <array>
#include <string_view>

#include "config/validation.h"

namespace oxide::rpc {
namespace {

using google::protobuf::FieldDescriptor;

bool IsIdField(std::string_view name) {
  static constexpr std::array<std::string_view, 4> kIdFields = {"volume_id", "source_volume_id",
                                                                "snapshot_id", "node_id"};
  for (std::string_view id : kIdFields) {
    if (name == id) return true;
  }
  return false;
}

}  // namespace

void CanonicalizeIds(google::protobuf::Message* message) {
  const google::protobuf::Descriptor* descriptor = message->GetDescriptor();
  const google::protobuf::Reflection* reflection = message->GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    if (field->is_repeated() || field->is_map()) continue;
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (reflection->HasField(*message, field)) {
        CanonicalizeIds(reflection->MutableMessage(message, field));
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING && IsIdField(field->name())) {
      std::string value = reflection->GetString(*message, field);
      if (IsUuid(value)) {
        std::string lower = ToLower(value);
        if (lower != value) reflection->SetString(message, field, std::move(lower));
      }
    }
  }
}

}  // namespace oxide::rpc
