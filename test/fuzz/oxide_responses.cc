// Fuzz target: what Oxide (or anything pretending to be it) answers, through the readers of
// backend/oxide_json.h, the streaming disk reader and the error mapping. The first byte picks the
// reader, the second the HTTP status (from a table; 0 is a transport failure); the rest is the
// body. Invariants: nothing crashes or throws; a 2xx maps to OK and anything else to an error with
// a message; the streaming disk reader and the generic one (a disk inside a page) accept exactly
// the same bodies and read the same fields.
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "backend/disk_json_reader.h"
#include "backend/error_mapping.h"
#include "backend/oxide_json.h"
#include "fuzz_target.h"

namespace {

using namespace oxide::backend;

bool SameDisk(const Disk& a, const Disk& b) {
  return a.id == b.id && a.name == b.name && a.description == b.description &&
         a.project_id == b.project_id && a.snapshot_id == b.snapshot_id &&
         a.image_id == b.image_id && a.size == b.size && a.block_size == b.block_size &&
         a.state.status == b.state.status && a.state.instance == b.state.instance &&
         a.disk_type == b.disk_type && a.read_only == b.read_only &&
         a.time_created == b.time_created && a.time_modified == b.time_modified;
}

// The streaming reader against the generic one on the same object.
void CompareDiskReaders(const std::string& body) {
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return;
  // Both read the document as nlohmann writes it back: a body with a key twice (which Oxide
  // never sends) reads differently by nature, a stream seeing both and a document the last.
  const std::string object = json.dump();
  Disk streamed;
  const bool stream_ok = ReadDiskJson(object, &streamed).empty();
  HttpResponse page;
  page.status = 200;
  page.body = "{\"items\":[" + object + "],\"next_page\":null}";
  auto paged = ParseDiskPage("fuzz", page);
  Expect(stream_ok == paged.ok());
  if (stream_ok) Expect(SameDisk(streamed, paged->items.at(0)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  HttpResponse response;
  constexpr int kStatuses[16] = {200, 201, 204, 0,   302, 400, 401, 403,
                                 404, 409, 429, 500, 502, 503, 504, 599};
  response.status = kStatuses[data[1] % 16];
  if (response.status == 0) {
    response.transport_error = TransportError::kConnect;
    response.transport_message = "connection refused";
  }
  response.body.assign(reinterpret_cast<const char*>(data + 2), size - 2);
  response.request_id = "fuzz-request";
  switch (data[0] % 10) {
    case 0:
      (void)ParseDisk("fuzz", response);
      break;  // the results only matter for crashes
    case 1:
      (void)ParseSnapshot("fuzz", response);
      break;
    case 2:
      (void)ParseProject("fuzz", response);
      break;
    case 3:
      (void)ParseInstance("fuzz", response);
      break;
    case 4:
      (void)ParseUtilization("fuzz", response);
      break;
    case 5:
      (void)ParseCurrentUser("fuzz", response);
      break;
    case 6:
      (void)ParseDiskPage("fuzz", response);
      break;
    case 7:
      (void)ParseSnapshotPage("fuzz", response);
      break;
    case 8:
      CompareDiskReaders(response.body);
      break;
    default: {
      const oxide::Status status = StatusFromResponse("fuzz request", response);
      Expect(status.ok() == (response.status >= 200 && response.status < 300 &&
                             response.transport_error == TransportError::kNone));
      if (!status.ok()) Expect(!status.message().empty());
    }
  }
  return 0;
}
