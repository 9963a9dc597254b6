#include "rpc/message_redaction.h"

#include <google/protobuf/text_format.h>

#include <memory>

#include "csi.pb.h"

namespace oxide::rpc {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

void RedactInPlace(Message* message) {
  const Reflection* reflection = message->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(*message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->options().GetExtension(csi::v1::csi_secret)) {
      // Keep the keys of a secrets map (they tell which secret was sent), drop the values.
      if (field->is_map()) {
        int n = reflection->FieldSize(*message, field);
        for (int i = 0; i < n; ++i) {
          Message* entry = reflection->MutableRepeatedMessage(message, field, i);
          const FieldDescriptor* value = entry->GetDescriptor()->FindFieldByName("value");
          entry->GetReflection()->SetString(entry, value, "[REDACTED]");
        }
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING && !field->is_repeated()) {
        reflection->SetString(message, field, "[REDACTED]");
      } else {
        reflection->ClearField(message, field);
      }
      continue;
    }
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (field->is_repeated()) {
      int n = reflection->FieldSize(*message, field);
      for (int i = 0; i < n; ++i)
        RedactInPlace(reflection->MutableRepeatedMessage(message, field, i));
    } else {
      RedactInPlace(reflection->MutableMessage(message, field));
    }
  }
}

}  // namespace

std::string RedactedText(const Message& message) {
  std::unique_ptr<Message> copy(message.New());
  copy->CopyFrom(message);
  RedactInPlace(copy.get());
  std::string text;
  google::protobuf::TextFormat::Printer printer;
  printer.SetSingleLineMode(true);
  printer.PrintToString(*copy, &text);
  return text;
}

}  // namespace oxide::rpc
