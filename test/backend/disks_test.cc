// The typed disk calls against oxide-sim: happy paths and the error table's disk rows.
#include "backend_fixture.h"

namespace backend_test {
namespace {

using DiskTest = BackendTest;
const std::string kRequestId = "(oxide request id ";

TEST_F(DiskTest, CreateGetByNameAndIdDelete) {
  auto created = CreateBlankDisk("pv-a", 2);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->name, "pv-a");
  EXPECT_EQ(created->size, 2 * kGiB);
  EXPECT_EQ(created->block_size, 4096U);
  EXPECT_EQ(created->state.status,
            oxide::backend::DiskStatus::kCreating);  // the 201 body is taken at insert time
  EXPECT_EQ(created->disk_type, "distributed");
  EXPECT_FALSE(created->snapshot_id.has_value());

  auto by_name = GetDisk("pv-a");
  ASSERT_TRUE(by_name.ok()) << by_name.status().ToString();
  EXPECT_EQ(by_name->id, created->id);
  EXPECT_EQ(by_name->state.status, oxide::backend::DiskStatus::kDetached);
  auto by_id = GetDisk(created->id);
  ASSERT_TRUE(by_id.ok()) << by_id.status().ToString();
  EXPECT_EQ(by_id->name, "pv-a");

  EXPECT_TRUE(AwaitStatus([&](DoneStatus d) { client().DeleteDisk(created->id, d); }).ok());
  ExpectError(GetDisk("pv-a").status(), StatusCode::kNotFound,
              {"get disk \"pv-a\"", "not found: disk with name \"pv-a\"", kRequestId});
  ExpectError(AwaitStatus([&](DoneStatus d) { client().DeleteDisk("pv-a", d); }),
              StatusCode::kNotFound, {"delete disk \"pv-a\"", kRequestId});
}

// Unknown body fields refused, so a disk_source beside {"type":"local"} would fail the create.
class StrictDiskTest : public BackendTest {
 protected:
  std::vector<std::string> sim_args() const override { return {"--reject-unknown-fields"}; }
};

TEST_F(StrictDiskTest, ALocalDiskIsCreatedWithTheLocalBackendAndNoSource) {
  DiskCreate create;
  create.name = "pv-local";
  create.description = "test disk";
  create.size = 3 * kGiB;
  create.block_size = 512;  // a blank distributed disk's only: a local disk has 4096
  create.disk_type = kDiskTypeLocal;
  auto created =
      Await<Disk>([&](Done<Disk> done) { client().CreateDisk(create, std::move(done)); });
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->disk_type, "local");
  EXPECT_EQ(created->block_size, 4096U);
  EXPECT_FALSE(created->snapshot_id.has_value());
  EXPECT_EQ(GetDisk("pv-local")->disk_type, "local");
}

TEST_F(DiskTest, NamesThatNeedEncodingAreSentEncoded) {
  // Not a valid name: the server answers a 400 about the name, which proves it got it intact.
  // "?" and "&" did not end the path or split the query: the server saw the whole name.
  ExpectError(GetDisk("a b?d&x").status(), StatusCode::kInvalidArgument,
              {"name contains invalid character: \" \"", kRequestId});
  EXPECT_EQ(CountRequests("GET", "disk_view"), 1);
}

TEST_F(DiskTest, DuplicateNameIsAlreadyExists) {
  ASSERT_TRUE(CreateBlankDisk("pv-dup").ok());
  ExpectError(CreateBlankDisk("pv-dup").status(), StatusCode::kAlreadyExists,
              {"create disk \"pv-dup\"", "already exists: disk \"pv-dup\"", kRequestId});
}

TEST_F(DiskTest, SizeRulesMapToOutOfRangeOrInvalidArgument) {
  DiskCreate create{"pv-size", "", kGiB / 2, 4096, ""};
  auto create_with = [&](uint64_t size) {
    create.size = size;
    return Await<Disk>([&](Done<Disk> done) { client().CreateDisk(create, std::move(done)); });
  };
  ExpectError(create_with(kGiB / 2).status(), StatusCode::kOutOfRange,
              {"total size must be at least 1 GiB", "whole GiB", kRequestId});
  ExpectError(create_with(1024 * kGiB).status(), StatusCode::kOutOfRange,
              {"total size must be less than 1023 GiB"});
  ExpectError(create_with(kGiB + kGiB / 2).status(), StatusCode::kInvalidArgument,
              {"total size must be a multiple of 1 GiB"});
  create.block_size = 1000;  // framework 400 (no error_code)
  ExpectError(create_with(kGiB).status(), StatusCode::kInvalidArgument,
              {"unable to parse JSON body"});
}

TEST_F(DiskTest, BadNameIsInvalidArgument) {
  ExpectError(CreateBlankDisk("Bad-Name").status(), StatusCode::kInvalidArgument,
              {"name must begin with an ASCII lowercase character"});
}

TEST_F(DiskTest, DeletingAnAttachedDiskIsFailedPreconditionExplained) {
  const std::string instance = ControlInstance("node-1", "stopped");
  ASSERT_TRUE(CreateBlankDisk("pv-att").ok());
  auto attached = Await<Disk>(
      [&](Done<Disk> done) { client().AttachDisk(instance, "pv-att", std::move(done)); });
  ASSERT_TRUE(attached.ok()) << attached.status().ToString();
  ExpectError(
      AwaitStatus([&](DoneStatus d) { client().DeleteDisk("pv-att", d); }),
      StatusCode::kFailedPrecondition,
      {"only when it is detached", "disk cannot be deleted in state \"attached\"", kRequestId});
}

class QuotaTest : public BackendTest {
  std::vector<std::string> sim_args() const override {
    return {"--storage-quota", std::to_string(3 * kGiB)};
  }
};

TEST_F(QuotaTest, QuotaExceededIsResourceExhausted) {
  ASSERT_TRUE(CreateBlankDisk("pv-q1", 2).ok());
  ExpectError(CreateBlankDisk("pv-q2", 2).status(), StatusCode::kResourceExhausted,
              {"Insufficient capacity", kRequestId});
  auto utilization =
      Await<Utilization>([&](Done<Utilization> done) { client().GetUtilization(std::move(done)); });
  ASSERT_TRUE(utilization.ok()) << utilization.status().ToString();
  EXPECT_EQ(utilization->capacity.storage, 3 * kGiB);
  EXPECT_EQ(utilization->provisioned.storage, 2 * kGiB);
}

}  // namespace
}  // namespace backend_test
