#include "backend/disk_json_reader.h"

#include <array>
#include <nlohmann/json.hpp>

namespace oxide::backend {
namespace {

using Json = nlohmann::json;

// The fields of a disk, in the order the generic reader checks them (which decides the one
// problem reported when several fields are wrong).
enum Field : int {
  kId,
  kName,
  kDescription,
  kProjectId,
  kSnapshotId,
  kImageId,
  kSize,
  kBlockSize,
  kState,
  kStateState,
  kStateInstance,
  kDiskType,
  kReadOnly,
  kTimeCreated,
  kTimeModified,
  kFieldCount,
  kIgnored = kFieldCount,
};

enum class Kind { kString, kOptionalString, kUnsigned, kBool, kObject };

struct FieldSpec {
  const char* path;
  Kind kind;
};

constexpr std::array<FieldSpec, kFieldCount> kFields = {{
    {"id", Kind::kString},
    {"name", Kind::kString},
    {"description", Kind::kString},
    {"project_id", Kind::kString},
    {"snapshot_id", Kind::kOptionalString},
    {"image_id", Kind::kOptionalString},
    {"size", Kind::kUnsigned},
    {"block_size", Kind::kUnsigned},
    {"state", Kind::kObject},
    {"state.state", Kind::kString},
    {"state.instance", Kind::kString},
    {"disk_type", Kind::kString},
    {"read_only", Kind::kBool},
    {"time_created", Kind::kString},
    {"time_modified", Kind::kString},
}};

const char* Expected(Kind kind) {
  switch (kind) {
    case Kind::kString:
      return "a string";
    case Kind::kOptionalString:
      return "a string or null";
    case Kind::kUnsigned:
      return "an unsigned integer";
    case Kind::kBool:
      return "a boolean";
    case Kind::kObject:
      return "an object";
  }
  return "";
}

Field TopLevelField(std::string_view key) {
  for (int f = kId; f < kFieldCount; ++f) {
    if (f == kStateState || f == kStateInstance) continue;
    if (key == kFields[f].path) return static_cast<Field>(f);
  }
  return kIgnored;
}

Field StateField(std::string_view key) {
  if (key == "state") return kStateState;
  if (key == "instance") return kStateInstance;
  return kIgnored;
}

// Receives the parser's events. Depth 1 is the disk object, depth 2 inside "state" is its
// state; anything deeper, and the value of any other key, is skipped.
class DiskSax : public nlohmann::json_sax<Json> {
 public:
  explicit DiskSax(Disk* disk) : disk_(disk) {}

  // Every event returns true (false would stop the parser): a wrong value is recorded, not fatal.
  bool null() override {
    Value(Event::kNull);
    return true;
  }
  bool boolean(bool value) override {
    if (Value(Event::kBool) && current_ == kReadOnly) disk_->read_only = value;
    return true;
  }
  bool number_integer(number_integer_t) override {
    Value(Event::kOther);
    return true;
  }
  bool number_unsigned(number_unsigned_t value) override {
    if (Value(Event::kUnsigned)) {
      if (current_ == kSize) disk_->size = value;
      if (current_ == kBlockSize) disk_->block_size = value;
    }
    return true;
  }
  bool number_float(number_float_t, const string_t&) override {
    Value(Event::kOther);
    return true;
  }
  bool string(string_t& value) override {
    if (Value(Event::kString)) {
      if (std::string* target = StringTarget())
        *target = value;  // a copy: the parser keeps its buffer
    }
    return true;
  }
  bool binary(binary_t&) override {
    Value(Event::kOther);
    return true;
  }
  bool start_object(std::size_t) override {
    if (depth_ == 0) {
      top_is_object_ = true;
    } else if (depth_ == 1 && current_ == kState) {
      seen_[kState] = Seen::kRight;
      // A repeated "state" replaces the earlier one, as in a parsed document.
      seen_[kStateState] = seen_[kStateInstance] = Seen::kAbsent;
      status_.clear();
      disk_->state.instance.clear();
      in_state_ = true;
    } else {
      Value(Event::kOther);
    }
    ++depth_;
    current_ = kIgnored;
    return true;
  }
  bool end_object() override {
    --depth_;
    if (depth_ == 1) in_state_ = false;
    current_ = kIgnored;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ > 0) Value(Event::kOther);
    ++depth_;
    current_ = kIgnored;
    return true;
  }
  bool end_array() override {
    --depth_;
    current_ = kIgnored;
    return true;
  }
  bool key(string_t& key) override {
    if (depth_ == 1) {
      current_ = TopLevelField(key);
    } else if (depth_ == 2 && in_state_) {
      current_ = StateField(key);
    } else {
      current_ = kIgnored;
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    malformed_ = true;
    return false;
  }

  std::string Problem() const {
    if (malformed_) return "the body is not JSON";
    if (!top_is_object_) return "the body is not a JSON object";
    for (int f = kId; f < kFieldCount; ++f) {
      const FieldSpec& spec = kFields[f];
      if (f == kStateInstance && !HoldsInstance(ParsedStatus())) continue;
      if (seen_[f] == Seen::kWrong) {
        return "field \"" + std::string(spec.path) + "\" is not " + Expected(spec.kind);
      }
      if (seen_[f] == Seen::kAbsent && spec.kind != Kind::kOptionalString) {
        return "field \"" + std::string(spec.path) + "\" is missing";
      }
    }
    return "";
  }

  DiskStatus ParsedStatus() const { return ParseDiskStatus(status_); }

 private:
  enum class Event { kNull, kBool, kUnsigned, kString, kOther };
  enum class Seen { kAbsent, kRight, kWrong };

  // Records a scalar (or a skipped container) as the value of the current field; true when it
  // has the field's type and should be stored.
  bool Value(Event event) {
    if (current_ == kIgnored || !(depth_ == 1 || (depth_ == 2 && in_state_))) return false;
    const Kind kind = kFields[current_].kind;
    bool right = false;
    switch (kind) {
      case Kind::kString:
        right = event == Event::kString;
        break;
      case Kind::kOptionalString:
        right = event == Event::kString || event == Event::kNull;
        if (event == Event::kNull) OptionalTarget()->reset();
        break;
      case Kind::kUnsigned:
        right = event == Event::kUnsigned;
        break;
      case Kind::kBool:
        right = event == Event::kBool;
        break;
      case Kind::kObject:
        break;  // start_object handles the right case
    }
    seen_[current_] = right ? Seen::kRight : Seen::kWrong;
    return right;
  }

  std::optional<std::string>* OptionalTarget() {
    return current_ == kSnapshotId ? &disk_->snapshot_id : &disk_->image_id;
  }

  std::string* StringTarget() {
    switch (current_) {
      case kId:
        return &disk_->id;
      case kName:
        return &disk_->name;
      case kDescription:
        return &disk_->description;
      case kProjectId:
        return &disk_->project_id;
      case kSnapshotId:
      case kImageId:
        return &OptionalTarget()->emplace();
      case kStateState:
        return &status_;
      case kStateInstance:
        return &disk_->state.instance;
      case kDiskType:
        return &disk_->disk_type;
      case kTimeCreated:
        return &disk_->time_created;
      case kTimeModified:
        return &disk_->time_modified;
      default:
        return nullptr;
    }
  }

  Disk* disk_;
  std::string status_;  // "state.state" as Oxide spells it
  int depth_ = 0;
  Field current_ = kIgnored;
  bool in_state_ = false;
  bool top_is_object_ = false;
  bool malformed_ = false;
  std::array<Seen, kFieldCount> seen_{};
};

}  // namespace

std::string ReadDiskJson(std::string_view body, Disk* disk) {
  DiskSax sax(disk);
  Json::sax_parse(body.begin(), body.end(), &sax);
  std::string problem = sax.Problem();
  disk->state.status = sax.ParsedStatus();
  // Like the generic reader, which only reads "instance" where the state holds one.
  if (problem.empty() && !HoldsInstance(disk->state.status)) disk->state.instance.clear();
  return problem;
}

}  // namespace oxide::backend
