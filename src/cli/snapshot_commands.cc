// oxide-csi-ctl snapshot verbs: create, delete, get and list, each one CSI Controller snapshot
// call. Single-threaded CLI.
#include <google/protobuf/util/time_util.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/verb_output.h"
#include "csi.grpc.pb.h"

namespace oxide::cli {
namespace {

using csi::v1::Controller;

void PrintSnapshotLine(const csi::v1::Snapshot& snapshot) {
  std::cout << snapshot.snapshot_id() << "  source=" << snapshot.source_volume_id() << "  "
            << (snapshot.size_bytes() >> 30)
            << " GiB  ready_to_use=" << (snapshot.ready_to_use() ? "true" : "false")
            << "  created=" << google::protobuf::util::TimeUtil::ToString(snapshot.creation_time())
            << "\n";
}

int Create(const CliContext& context, const ParsedArgs& args) {
  csi::v1::CreateSnapshotRequest request;
  request.set_name(args.positional[0]);
  request.set_source_volume_id(args.positional[1]);
  csi::v1::CreateSnapshotResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->CreateSnapshot(context.NewCall().get(), request, &response);
  return Print(context, status, response, [&] { PrintSnapshotLine(response.snapshot()); });
}

int Delete(const CliContext& context, const ParsedArgs& args) {
  csi::v1::DeleteSnapshotRequest request;
  request.set_snapshot_id(args.positional[0]);
  csi::v1::DeleteSnapshotResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->DeleteSnapshot(context.NewCall().get(), request, &response);
  return Print(context, status, response, [] { std::cout << "deleted\n"; });
}

int Get(const CliContext& context, const ParsedArgs& args) {
  csi::v1::GetSnapshotRequest request;
  request.set_snapshot_id(args.positional[0]);
  csi::v1::GetSnapshotResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->GetSnapshot(context.NewCall().get(), request, &response);
  return Print(context, status, response, [&] { PrintSnapshotLine(response.snapshot()); });
}

int List(const CliContext& context, const ParsedArgs& args) {
  csi::v1::ListSnapshotsRequest request;
  if (args.Has("max")) request.set_max_entries(static_cast<int32_t>(args.Number("max")));
  request.set_starting_token(args.Get("token"));
  request.set_snapshot_id(args.Get("snapshot-id"));
  request.set_source_volume_id(args.Get("source-volume-id"));
  csi::v1::ListSnapshotsResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->ListSnapshots(context.NewCall().get(), request, &response);
  return Print(context, status, response, [&] {
    if (response.entries().empty()) std::cout << "(no snapshots)\n";
    for (const auto& entry : response.entries())
      PrintSnapshotLine(entry.snapshot());
    if (!response.next_token().empty()) {
      std::cout << "next_token: " << response.next_token() << "\n";
    }
  });
}

}  // namespace

std::vector<Command> SnapshotCommands() {
  constexpr uint64_t kMaxEntries = 2147483647;  // max_entries is an int32
  const PositionalSpec snapshot_id{.name = "snapshot-id", .field = "snapshot_id"};
  return {
      {{.group = "snapshot",
        .verb = "create",
        .help = "CreateSnapshot: take (or find) the snapshot for this CSI name; shows "
                "ready_to_use.",
        .positionals = {{.name = "name"},
                        {.name = "source-volume-id", .field = "source_volume_id"}}},
       Create},
      {{.group = "snapshot",
        .verb = "delete",
        .help = "DeleteSnapshot: delete the snapshot.",
        .positionals = {snapshot_id}},
       Delete},
      {{.group = "snapshot",
        .verb = "get",
        .help = "GetSnapshot (CSI v1.12): one snapshot, with ready_to_use as Oxide reports it.",
        .positionals = {snapshot_id}},
       Get},
      {{.group = "snapshot",
        .verb = "list",
        .help = "ListSnapshots: every snapshot of the project, or the ones the flags select.",
        .flags = {StringFlag("snapshot-id", "ID", "Only this snapshot.", "snapshot_id"),
                  StringFlag("source-volume-id", "ID", "Only the snapshots of this volume.",
                             "source_volume_id"),
                  NumberFlag("max", "N", 1, kMaxEntries, "entries", "At most N entries per page.",
                             "max_entries"),
                  StringFlag("token", "T",
                             "Start at this page (the next_token of the previous "
                             "page).",
                             "starting_token")}},
       List},
  };
}

}  // namespace oxide::cli
