#include "rpc/message_redaction.h"

#include <google/protobuf/text_format.h>

#include <memory>
#include <string>
#include <vector>

#include "csi.pb.h"

namespace oxide::rpc {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Clears every csi_secret field at any depth and records "path (N entries)" for each. Map fields
// are only counted and cleared, never edited entry by entry.
void RedactInPlace(Message* message, const std::string& path, std::vector<std::string>* removed) {
  const Reflection* reflection = message->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(*message, &fields);
  for (const FieldDescriptor* field : fields) {
    std::string field_path = path.empty() ? field->name() : path + "." + field->name();
    if (field->options().GetExtension(csi::v1::csi_secret)) {
      int count = field->is_repeated() ? reflection->FieldSize(*message, field) : 1;
      removed->push_back(field_path + " (" + std::to_string(count) + " entries)");
      reflection->ClearField(message, field);
      continue;
    }
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || field->is_map()) continue;
    if (field->is_repeated()) {
      int n = reflection->FieldSize(*message, field);
      for (int i = 0; i < n; ++i) {
        RedactInPlace(reflection->MutableRepeatedMessage(message, field, i), field_path, removed);
      }
    } else {
      RedactInPlace(reflection->MutableMessage(message, field), field_path, removed);
    }
  }
}

}  // namespace

std::string RedactedText(const Message& message) {
  std::unique_ptr<Message> copy(message.New());
  copy->CopyFrom(message);
  std::vector<std::string> removed;
  RedactInPlace(copy.get(), "", &removed);
  std::string text;
  google::protobuf::TextFormat::Printer printer;
  printer.SetSingleLineMode(true);
  printer.PrintToString(*copy, &text);
  for (const std::string& field : removed)
    text += " " + field + ": [REDACTED]";
  return text;
}

}  // namespace oxide::rpc
