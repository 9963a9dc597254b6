// Snapshots, restore and clone end to end through the real plugin in --mode=all, against oxide-sim
// with guest device emulation (each disk and snapshot has a backing file; a snapshot copies its
// disk's data; a disk made from a snapshot starts with it): write data on a mounted volume, take
// a snapshot of the attached (unmounted) disk, make a volume from the snapshot or straight from
// the volume, mount it and find the same bytes; the copies are independent; nothing is left in
// Oxide afterwards. Needs root.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>

#include "guest_volume_fixture.h"
#include "support/wait_until.h"

namespace oxide::testing {
namespace {

constexpr size_t kPayloadBytes = size_t{4} << 20;

// Deterministic pseudo-random bytes (incompressible, no long runs of zeros).
std::string Payload(uint64_t seed, size_t bytes = kPayloadBytes) {
  std::mt19937_64 random(seed);
  std::string data(bytes, '\0');
  for (size_t i = 0; i < bytes; i += 8) {
    uint64_t word = random();
    for (size_t j = 0; j < 8 && i + j < bytes; ++j)
      data[i + j] = static_cast<char>(word >> (8 * j));
  }
  return data;
}

// Writes the whole file and fsyncs it (and its directory).
void WriteSynced(const std::string& path, const std::string& data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ASSERT_GT(n, 0) << path << ": " << std::strerror(errno);
    done += static_cast<size_t>(n);
  }
  EXPECT_EQ(::fsync(fd), 0) << std::strerror(errno);
  ::close(fd);
  int dir = ::open(std::filesystem::path(path).parent_path().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir, 0);
  EXPECT_EQ(::fsync(dir), 0);
  ::close(dir);
}

// Same bytes, without printing megabytes on a failure.
::testing::AssertionResult SameBytes(const std::string& actual, const std::string& expected) {
  if (actual == expected) return ::testing::AssertionSuccess();
  size_t first = 0;
  while (first < actual.size() && first < expected.size() && actual[first] == expected[first]) {
    ++first;
  }
  return ::testing::AssertionFailure() << "read " << actual.size() << " bytes, expected "
                                       << expected.size() << "; first difference at byte " << first;
}

class SnapshotE2E : public GuestVolumeTest {
 protected:
  // CreateSnapshot, repeated as the CO does until the snapshot is ready to use; counts the
  // answers that said ready_to_use = false in *not_ready.
  csi::v1::Snapshot MustSnapshot(
      const std::string& name, const std::string& source,
      std::chrono::milliseconds call_timeout = std::chrono::seconds(20), int* not_ready = nullptr,
      const std::function<void(const csi::v1::Snapshot&)>& on_first_not_ready = nullptr) {
    csi::v1::CreateSnapshotRequest request;
    request.set_name(name);
    request.set_source_volume_id(source);
    int attempt = 0;
    csi::v1::CreateSnapshotResponse response;
    const bool answered = WaitUntil(
        [&] {
          ++attempt;
          grpc::Status status =
              controller_->CreateSnapshot(Call(call_timeout).get(), request, &response);
          EXPECT_TRUE(status.ok())
              << "attempt " << attempt << ": " << status.error_message() << "\n"
              << plugin_->Log();
          if (!status.ok() || response.snapshot().ready_to_use()) return true;
          if (not_ready != nullptr) ++*not_ready;
          if (on_first_not_ready && attempt == 1) on_first_not_ready(response.snapshot());
          return false;
        },
        std::chrono::seconds(60), std::chrono::milliseconds(50));
    if (!answered) {
      ADD_FAILURE() << "snapshot " << response.snapshot().snapshot_id()
                    << " not ready to use after " << attempt << " CreateSnapshot calls";
    }
    return response.snapshot();
  }

  void SetSimConfig(const nlohmann::json& config) {
    sim_test::Reply reply = api_->put("/__sim/config", config);
    ASSERT_EQ(reply.status, 200) << reply.body;
  }

  grpc::Status DeleteSnapshot(const std::string& id) {
    csi::v1::DeleteSnapshotRequest request;
    request.set_snapshot_id(id);
    csi::v1::DeleteSnapshotResponse response;
    return controller_->DeleteSnapshot(Call().get(), request, &response);
  }

  std::vector<csi::v1::Snapshot> ListSnapshots(const std::string& source_volume_id = "",
                                               const std::string& snapshot_id = "") {
    csi::v1::ListSnapshotsRequest request;
    request.set_source_volume_id(source_volume_id);
    request.set_snapshot_id(snapshot_id);
    std::vector<csi::v1::Snapshot> snapshots;
    do {
      csi::v1::ListSnapshotsResponse response;
      grpc::Status status = controller_->ListSnapshots(Call().get(), request, &response);
      EXPECT_TRUE(status.ok()) << status.error_message();
      if (!status.ok()) break;
      for (const auto& entry : response.entries())
        snapshots.push_back(entry.snapshot());
      request.set_starting_token(response.next_token());
    } while (!request.starting_token().empty());
    return snapshots;
  }

  csi::v1::Volume MustCreateFrom(const std::string& name, int64_t gib,
                                 const csi::v1::VolumeContentSource& source) {
    csi::v1::CreateVolumeRequest request = CreateRequest(name, gib);
    *request.mutable_volume_content_source() = source;
    csi::v1::CreateVolumeResponse response;
    grpc::Status status =
        controller_->CreateVolume(Call(std::chrono::seconds(60)).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message() << "\n" << plugin_->Log();
    return response.volume();
  }

  // The names of what Oxide holds in the project, straight from the simulator's API (every page).
  std::vector<std::string> SimNames(const std::string& collection) {
    std::vector<std::string> names;
    std::string token;
    for (int pages = 0; pages < 100; ++pages) {
      sim_test::Reply reply = api_->get("/v1/" + collection + "?project=demo&limit=100" +
                                        (token.empty() ? "" : "&page_token=" + token));
      EXPECT_EQ(reply.status, 200) << reply.body;
      if (reply.status != 200) break;
      const nlohmann::json page = reply.json();
      for (const auto& item : page["items"])
        names.push_back(item["name"]);
      nlohmann::json next = page.value("next_page", nlohmann::json());
      if (next.is_null() || page["items"].empty()) break;
      token = next.get<std::string>();
    }
    return names;
  }

  void ExpectNothingLeft() {
    EXPECT_TRUE(SimNames("disks").empty()) << ::testing::PrintToString(SimNames("disks"));
    EXPECT_TRUE(SimNames("snapshots").empty()) << ::testing::PrintToString(SimNames("snapshots"));
    EXPECT_TRUE(ListSnapshots().empty());
    std::string mounts = ReadFile("/proc/self/mountinfo");
    EXPECT_EQ(mounts.find(work_.path()), std::string::npos) << "no mount left behind";
  }

  // Volume A, mounted, holding data.bin = `data`, then unmounted and left attached to node-1.
  csi::v1::Volume SourceWithData(csi::v1::Node::Stub& node, const std::string& data) {
    csi::v1::Volume a = MustCreate("pvc-source", 1);
    MountAndCheck(node, a, staging_a_, target_a_);
    if (HasFatalFailure()) return a;
    WriteSynced(target_a_ + "/data.bin", data);
    Unmount(node, a, staging_a_, target_a_);
    EXPECT_EQ(SimDisk(a.volume_id())["state"]["state"], "attached");
    EXPECT_FALSE(std::filesystem::exists(target_a_ + "/data.bin")) << "unmounted";
    return a;
  }

  // Mounts `copy` (made from A), finds `data`, writes over it, detaches it; then A, mounted
  // again, still holds `data` and nothing the copy wrote.
  void CheckCopy(csi::v1::Node::Stub& node, const csi::v1::Volume& a, const csi::v1::Volume& copy,
                 const std::string& data) {
    MountAndCheck(node, copy, staging_b_, target_b_);
    if (HasFatalFailure()) return;
    EXPECT_TRUE(SameBytes(ReadFile(target_b_ + "/data.bin"), data));
    WriteSynced(target_b_ + "/data.bin", Payload(99));
    WriteFile(target_b_ + "/only-on-the-copy.txt", "written after the copy was made");
    UnmountAndDetach(node, copy, staging_b_, target_b_);
    if (HasFatalFailure()) return;

    MountAndCheck(node, a, staging_a_, target_a_);
    if (HasFatalFailure()) return;
    EXPECT_TRUE(SameBytes(ReadFile(target_a_ + "/data.bin"), data)) << "the source changed";
    EXPECT_FALSE(std::filesystem::exists(target_a_ + "/only-on-the-copy.txt"));
    UnmountAndDetach(node, a, staging_a_, target_a_);
  }

  std::string staging_a_ = work_.File("staging-a");
  std::string target_a_ = work_.File("pods/pod-a/volume");
  std::string staging_b_ = work_.File("staging-b");
  std::string target_b_ = work_.File("pods/pod-b/volume");
};

TEST_F(SnapshotE2E, RestoreFromSnapshotHasTheSameData) {
  auto node = csi::v1::Node::NewStub(UnixChannel(setup_->socket_path()));
  const std::string data = Payload(1);
  csi::v1::Volume a = SourceWithData(*node, data);
  ASSERT_FALSE(HasFatalFailure());

  // A snapshot of the attached, unmounted disk. Oxide takes 4 s to take it and each
  // CreateSnapshot has 2 s: the first answers ready_to_use = false (and a restore from the
  // snapshot is refused meanwhile), a retry finds it ready.
  SetSimConfig({{"create_delay_ms", 4000}});
  int not_ready = 0;
  csi::v1::Snapshot snapshot = MustSnapshot(
      "snapshot-of-source", a.volume_id(), std::chrono::seconds(2), &not_ready,
      [&](const csi::v1::Snapshot& creating) {
        csi::v1::CreateVolumeRequest early = CreateRequest("pvc-too-early", 1);
        early.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(
            creating.snapshot_id());
        ExpectCode(Create(early), grpc::StatusCode::UNAVAILABLE, "retry once it is ready");
      });
  SetSimConfig({{"create_delay_ms", 0}});
  ASSERT_TRUE(snapshot.ready_to_use());
  EXPECT_GE(not_ready, 1) << "the first answer came before Oxide finished";
  EXPECT_EQ(SimNames("disks").size(), 1u) << "the refused restore made no disk";
  EXPECT_EQ(snapshot.source_volume_id(), a.volume_id());
  EXPECT_EQ(snapshot.size_bytes(), 1 * kGiB);
  EXPECT_TRUE(snapshot.has_creation_time());
  std::vector<csi::v1::Snapshot> listed = ListSnapshots(a.volume_id());
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].snapshot_id(), snapshot.snapshot_id());
  EXPECT_EQ(listed[0].source_volume_id(), a.volume_id());
  EXPECT_TRUE(listed[0].ready_to_use());
  listed = ListSnapshots("", snapshot.snapshot_id());
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].source_volume_id(), a.volume_id());
  EXPECT_EQ(SimNames("snapshots").size(), 1u);

  // Restore into a bigger volume.
  csi::v1::VolumeContentSource source;
  source.mutable_snapshot()->set_snapshot_id(snapshot.snapshot_id());
  csi::v1::Volume b = MustCreateFrom("pvc-restored", 2, source);
  ASSERT_FALSE(b.volume_id().empty());
  EXPECT_NE(b.volume_id(), a.volume_id());
  EXPECT_GE(b.capacity_bytes(), 2 * kGiB);
  ASSERT_TRUE(b.content_source().has_snapshot()) << b.DebugString();
  EXPECT_EQ(b.content_source().snapshot().snapshot_id(), snapshot.snapshot_id());
  EXPECT_GE(SimDisk(b.volume_id())["size"].get<int64_t>(), 2 * kGiB);

  CheckCopy(*node, a, b, data);
  ASSERT_FALSE(HasFatalFailure());

  ASSERT_TRUE(Delete(a.volume_id()).ok());
  ASSERT_TRUE(Delete(b.volume_id()).ok());
  grpc::Status deleted = DeleteSnapshot(snapshot.snapshot_id());
  ASSERT_TRUE(deleted.ok()) << deleted.error_message();
  EXPECT_TRUE(DeleteSnapshot(snapshot.snapshot_id()).ok()) << "deleting again is a success";
  ExpectNothingLeft();
}

TEST_F(SnapshotE2E, CloneHasTheSameData) {
  auto node = csi::v1::Node::NewStub(UnixChannel(setup_->socket_path()));
  const std::string data = Payload(2);
  csi::v1::Volume a = SourceWithData(*node, data);
  ASSERT_FALSE(HasFatalFailure());
  // A snapshot the test makes itself: the clone must leave it alone.
  csi::v1::Snapshot own = MustSnapshot("snapshot-kept", a.volume_id());
  ASSERT_TRUE(own.ready_to_use());

  csi::v1::VolumeContentSource source;
  source.mutable_volume()->set_volume_id(a.volume_id());
  csi::v1::Volume c = MustCreateFrom("pvc-clone", 1, source);
  ASSERT_FALSE(c.volume_id().empty());
  EXPECT_NE(c.volume_id(), a.volume_id());
  EXPECT_GE(c.capacity_bytes(), 1 * kGiB);
  ASSERT_TRUE(c.content_source().has_volume()) << c.DebugString();
  EXPECT_EQ(c.content_source().volume().volume_id(), a.volume_id());

  // The clone's temporary snapshot is gone; the test's own snapshot is still there.
  std::vector<std::string> names = SimNames("snapshots");
  ASSERT_EQ(names.size(), 1u) << ::testing::PrintToString(names);
  std::vector<csi::v1::Snapshot> listed = ListSnapshots();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].snapshot_id(), own.snapshot_id());

  CheckCopy(*node, a, c, data);
  ASSERT_FALSE(HasFatalFailure());

  ASSERT_TRUE(DeleteSnapshot(own.snapshot_id()).ok());
  ASSERT_TRUE(Delete(c.volume_id()).ok());
  ASSERT_TRUE(Delete(a.volume_id()).ok());
  ExpectNothingLeft();
}

}  // namespace
}  // namespace oxide::testing
