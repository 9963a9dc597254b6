#include "rpc/size_limits.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <string>
#include <string_view>

namespace oxide::rpc {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

size_t StringLimit(std::string_view field) {
  if (field == "target_path" || field == "staging_target_path" || field == "volume_path") {
    return kPathLimit;
  }
  if (field == "starting_token") return kCsiMapLimit;
  return kCsiStringLimit;
}

Status TooLarge(const std::string& where, size_t size, size_t limit, const char* what) {
  return InvalidArgument(where + " is " + std::to_string(size) + " bytes; " + what + " at most " +
                         std::to_string(limit) + " bytes (CSI size limits)");
}

Status Check(const Message& message, const std::string& prefix) {
  const google::protobuf::Descriptor* descriptor = message.GetDescriptor();
  const google::protobuf::Reflection* reflection = message.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    const std::string where = prefix + field->name();
    if (field->is_map()) {
      size_t total = 0;
      for (int k = 0; k < reflection->FieldSize(message, field); ++k) {
        const Message& entry = reflection->GetRepeatedMessage(message, field, k);
        const google::protobuf::Reflection* entry_reflection = entry.GetReflection();
        for (const FieldDescriptor* part :
             {entry.GetDescriptor()->map_key(), entry.GetDescriptor()->map_value()}) {
          if (part->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
            total += entry_reflection->GetStringReference(entry, part, nullptr).size();
          }
        }
      }
      if (total > kCsiMapLimit) return TooLarge(where, total, kCsiMapLimit, "a map may hold");
    } else if (field->is_repeated()) {
      const int count = reflection->FieldSize(message, field);
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
        size_t total = 0;
        for (int k = 0; k < count; ++k) {
          total += reflection->GetRepeatedStringReference(message, field, k, nullptr).size();
        }
        if (total > kCsiMapLimit) {
          return TooLarge(where, total, kCsiMapLimit, "a repeated string field may hold");
        }
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        for (int k = 0; k < count; ++k) {
          Status nested = Check(reflection->GetRepeatedMessage(message, field, k),
                                where + "[" + std::to_string(k) + "].");
          if (!nested.ok()) return nested;
        }
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      const size_t size = reflection->GetStringReference(message, field, nullptr).size();
      const size_t limit = StringLimit(field->name());
      if (size > limit) return TooLarge(where, size, limit, "a string may be");
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE &&
               reflection->HasField(message, field)) {
      Status nested = Check(reflection->GetMessage(message, field), where + ".");
      if (!nested.ok()) return nested;
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckSizeLimits(const Message& message) {
  return Check(message, "");
}

}  // namespace oxide::rpc
