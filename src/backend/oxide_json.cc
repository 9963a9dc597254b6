#include "backend/oxide_json.h"

#include <nlohmann/json.hpp>
#include <string>

#include "backend/disk_json_reader.h"
#include "backend/error_mapping.h"

namespace oxide::backend {
namespace {

using Json = nlohmann::json;

// Reads fields of one JSON object; remembers the first problem (with the field's full path).
class FieldReader {
 public:
  FieldReader(const Json& object, std::string path, std::string* error)
      : object_(object), path_(std::move(path)), error_(error) {}

  void String(const char* key, std::string* out) {
    if (const Json* v = Find(key, true))
      Take(key, v->is_string(), "a string", [&] { *out = v->get<std::string>(); });
  }
  // Absent or null → nullopt.
  void OptionalString(const char* key, std::optional<std::string>* out) {
    const Json* v = Find(key, false);
    if (v == nullptr || v->is_null()) return out->reset();
    Take(key, v->is_string(), "a string or null", [&] { *out = v->get<std::string>(); });
  }
  void Unsigned(const char* key, uint64_t* out) {
    if (const Json* v = Find(key, true))
      Take(key, v->is_number_unsigned(), "an unsigned integer", [&] { *out = v->get<uint64_t>(); });
  }
  void Bool(const char* key, bool* out) {
    if (const Json* v = Find(key, true))
      Take(key, v->is_boolean(), "a boolean", [&] { *out = v->get<bool>(); });
  }
  // A nested object; on a problem, a reader of an empty object that reports nothing more.
  FieldReader Object(const char* key) {
    static const Json kEmpty = Json::object();
    const Json* v = Find(key, true);
    if (v != nullptr && !v->is_object()) Fail(key, "is not an object");
    const bool usable = v != nullptr && v->is_object();
    return FieldReader(usable ? *v : kEmpty, Path(key), error_);
  }
  const Json* Array(const char* key) {
    const Json* v = Find(key, true);
    if (v != nullptr && !v->is_array()) Fail(key, "is not an array");
    return v != nullptr && v->is_array() ? v : nullptr;
  }
  bool ok() const { return error_->empty(); }
  std::string* error() const { return error_; }
  void Report(const std::string& problem) {
    if (ok()) *error_ = problem;
  }
  std::string Path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

 private:
  const Json* Find(const char* key, bool required) {
    if (!ok()) return nullptr;
    auto it = object_.find(key);
    if (it == object_.end()) {
      if (required) Fail(key, "is missing");
      return nullptr;
    }
    return &*it;
  }
  template <typename Assign>
  void Take(const char* key, bool right_type, const char* expected, Assign assign) {
    if (right_type) {
      assign();
    } else {
      Fail(key, std::string("is not ") + expected);
    }
  }
  void Fail(const char* key, const std::string& problem) {
    if (ok()) *error_ = "field \"" + Path(key) + "\" " + problem;
  }

  const Json& object_;
  std::string path_;
  std::string* error_;
};

void Read(FieldReader& r, Disk* d) {
  r.String("id", &d->id);
  r.String("name", &d->name);
  r.String("description", &d->description);
  r.String("project_id", &d->project_id);
  r.OptionalString("snapshot_id", &d->snapshot_id);
  r.OptionalString("image_id", &d->image_id);
  r.Unsigned("size", &d->size);
  r.Unsigned("block_size", &d->block_size);
  FieldReader state = r.Object("state");
  std::string status;
  state.String("state", &status);
  d->state.status = ParseDiskStatus(status);
  if (HoldsInstance(d->state.status)) state.String("instance", &d->state.instance);
  r.String("disk_type", &d->disk_type);
  r.Bool("read_only", &d->read_only);
  r.String("time_created", &d->time_created);
  r.String("time_modified", &d->time_modified);
}

void Read(FieldReader& r, Snapshot* s) {
  r.String("id", &s->id);
  r.String("name", &s->name);
  r.String("description", &s->description);
  r.String("project_id", &s->project_id);
  r.String("disk_id", &s->disk_id);
  r.Unsigned("size", &s->size);
  std::string state;
  r.String("state", &state);
  s->state = ParseSnapshotStatus(state);
  r.String("time_created", &s->time_created);
  r.String("time_modified", &s->time_modified);
}

void Read(FieldReader& r, Project* p) {
  r.String("id", &p->id);
  r.String("name", &p->name);
  r.String("description", &p->description);
}

void Read(FieldReader& r, Instance* i) {
  r.String("id", &i->id);
  r.String("name", &i->name);
  r.String("description", &i->description);
  r.String("project_id", &i->project_id);
  r.String("hostname", &i->hostname);
  r.Unsigned("ncpus", &i->ncpus);
  r.Unsigned("memory", &i->memory);
  r.String("run_state", &i->run_state);
  r.OptionalString("boot_disk_id", &i->boot_disk_id);
  r.String("time_run_state_updated", &i->time_run_state_updated);
  r.String("time_created", &i->time_created);
  r.String("time_modified", &i->time_modified);
}

void ReadCounts(FieldReader r, ResourceCounts* c) {
  r.Unsigned("cpus", &c->cpus);
  r.Unsigned("memory", &c->memory);
  r.Unsigned("storage", &c->storage);
}

void Read(FieldReader& r, Utilization* u) {
  ReadCounts(r.Object("capacity"), &u->capacity);
  ReadCounts(r.Object("provisioned"), &u->provisioned);
}

void Read(FieldReader& r, CurrentUser* u) {
  r.String("id", &u->id);
  r.String("display_name", &u->display_name);
  r.String("silo_id", &u->silo_id);
  r.String("silo_name", &u->silo_name);
  r.Bool("silo_admin", &u->silo_admin);
  r.Bool("fleet_viewer", &u->fleet_viewer);
}

template <typename T>
void Read(FieldReader& r, Page<T>* page) {
  r.OptionalString("next_page", &page->next_page);
  const Json* items = r.Array("items");
  for (size_t i = 0; items != nullptr && i < items->size() && r.ok(); ++i) {
    const std::string path = r.Path("items[" + std::to_string(i) + "]");
    if (!(*items)[i].is_object()) {
      r.Report("field \"" + path + "\" is not an object");
      return;
    }
    FieldReader item((*items)[i], path, r.error());
    T value;
    Read(item, &value);
    if (r.ok()) page->items.push_back(std::move(value));
  }
}

Status Mismatch(std::string_view what, const HttpResponse& response, const std::string& problem) {
  return Internal(std::string(what) + ": Oxide's answer does not match the API reference: " +
                  problem + RequestIdSuffix(response));
}

template <typename T>
StatusOr<T> Parse(std::string_view what, const HttpResponse& response) {
  auto fail = [&](const std::string& problem) { return Mismatch(what, response, problem); };
  const Json json = Json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return fail("the body is not JSON");
  if (!json.is_object()) return fail("the body is not a JSON object");
  std::string error;
  FieldReader reader(json, "", &error);
  T value;
  Read(reader, &value);
  if (!error.empty()) return fail(error);
  return value;
}

}  // namespace

StatusOr<Disk> ParseDisk(std::string_view what, const HttpResponse& response) {
  Disk disk;
  std::string problem = ReadDiskJson(response.body, &disk);
  if (!problem.empty()) return Mismatch(what, response, problem);
  return disk;
}
StatusOr<Snapshot> ParseSnapshot(std::string_view what, const HttpResponse& response) {
  return Parse<Snapshot>(what, response);
}
StatusOr<Project> ParseProject(std::string_view what, const HttpResponse& response) {
  return Parse<Project>(what, response);
}
StatusOr<Instance> ParseInstance(std::string_view what, const HttpResponse& response) {
  return Parse<Instance>(what, response);
}
StatusOr<Utilization> ParseUtilization(std::string_view what, const HttpResponse& response) {
  return Parse<Utilization>(what, response);
}
StatusOr<CurrentUser> ParseCurrentUser(std::string_view what, const HttpResponse& response) {
  return Parse<CurrentUser>(what, response);
}
StatusOr<Page<Disk>> ParseDiskPage(std::string_view what, const HttpResponse& response) {
  return Parse<Page<Disk>>(what, response);
}
StatusOr<Page<Snapshot>> ParseSnapshotPage(std::string_view what, const HttpResponse& response) {
  return Parse<Page<Snapshot>>(what, response);
}

}  // namespace oxide::backend
