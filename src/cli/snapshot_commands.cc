// oxide-csi-ctl snapshot verbs: create, delete, get and list, each one CSI Controller snapshot
// call. Single-threaded CLI.
#include <google/protobuf/util/time_util.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/verb_args.h"
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

int Create(const CliContext& context, const std::vector<std::string>& raw) {
  VerbArgs args = Parse(raw);
  if (args.positional.size() != 2) {
    return Usage("snapshot create needs <name> <source-volume-id>");
  }
  csi::v1::CreateSnapshotRequest request;
  request.set_name(args.positional[0]);
  request.set_source_volume_id(args.positional[1]);
  csi::v1::CreateSnapshotResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->CreateSnapshot(context.NewCall().get(), request, &response);
  return Print(context, status, response, [&] { PrintSnapshotLine(response.snapshot()); });
}

int Delete(const CliContext& context, const std::vector<std::string>& raw) {
  VerbArgs args = Parse(raw);
  if (args.positional.size() != 1) return Usage("snapshot delete needs <snapshot-id>");
  csi::v1::DeleteSnapshotRequest request;
  request.set_snapshot_id(args.positional[0]);
  csi::v1::DeleteSnapshotResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->DeleteSnapshot(context.NewCall().get(), request, &response);
  return Print(context, status, response, [] { std::cout << "deleted\n"; });
}

int Get(const CliContext& context, const std::vector<std::string>& raw) {
  VerbArgs args = Parse(raw);
  if (args.positional.size() != 1) return Usage("snapshot get needs <snapshot-id>");
  csi::v1::GetSnapshotRequest request;
  request.set_snapshot_id(args.positional[0]);
  csi::v1::GetSnapshotResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->GetSnapshot(context.NewCall().get(), request, &response);
  return Print(context, status, response, [&] { PrintSnapshotLine(response.snapshot()); });
}

int List(const CliContext& context, const std::vector<std::string>& raw) {
  VerbArgs args = Parse(raw);
  csi::v1::ListSnapshotsRequest request;
  if (args.Has("max")) request.set_max_entries(std::stoi(args.Get("max")));
  request.set_starting_token(args.Get("token"));
  request.set_snapshot_id(args.Get("snapshot-id"));
  request.set_source_volume_id(args.Get("source-volume-id"));
  csi::v1::ListSnapshotsResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->ListSnapshots(context.NewCall().get(), request, &response);
  return Print(context, status, response, [&] {
    for (const auto& entry : response.entries())
      PrintSnapshotLine(entry.snapshot());
    if (!response.next_token().empty()) {
      std::cout << "next_token: " << response.next_token() << "\n";
    }
  });
}

}  // namespace

std::vector<Command> SnapshotCommands() {
  return {
      {"snapshot", "create", "<name> <source-volume-id>",
       "CreateSnapshot: take (or find) the snapshot for this CSI name; shows ready_to_use", Create},
      {"snapshot", "delete", "<snapshot-id>", "DeleteSnapshot", Delete},
      {"snapshot", "get", "<snapshot-id>",
       "GetSnapshot (CSI v1.12): one snapshot, with ready_to_use as Oxide reports it", Get},
      {"snapshot", "list", "[--snapshot-id=ID] [--source-volume-id=ID] [--max=N] [--token=T]",
       "ListSnapshots: every snapshot of the project", List},
  };
}

}  // namespace oxide::cli
