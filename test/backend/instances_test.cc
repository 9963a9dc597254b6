// Instances, attach/detach and the instance-disk list against oxide-sim, with the error table's
// attach rows (not stopped, attached elsewhere, 12-disk limit, not found).
#include "backend_fixture.h"

namespace backend_test {
namespace {

using InstanceTest = BackendTest;

StatusOr<Disk> Attach(BackendTest& t, const std::string& instance, const std::string& disk) {
  return t.Await<Disk>(
      [&](Done<Disk> done) { t.client().AttachDisk(instance, disk, std::move(done)); });
}

StatusOr<Disk> Detach(BackendTest& t, const std::string& instance, const std::string& disk) {
  return t.Await<Disk>(
      [&](Done<Disk> done) { t.client().DetachDisk(instance, disk, std::move(done)); });
}

TEST_F(InstanceTest, GetByNameAndId) {
  const std::string id = ControlInstance("node-1", "running");
  auto by_name = Await<Instance>(
      [&](Done<Instance> done) { client().GetInstance("node-1", std::move(done)); });
  ASSERT_TRUE(by_name.ok()) << by_name.status().ToString();
  EXPECT_EQ(by_name->id, id);
  EXPECT_EQ(by_name->run_state, "running");
  auto by_id =
      Await<Instance>([&](Done<Instance> done) { client().GetInstance(id, std::move(done)); });
  ASSERT_TRUE(by_id.ok()) << by_id.status().ToString();
  EXPECT_EQ(by_id->name, "node-1");
  ExpectError(Await<Instance>([&](Done<Instance> d) { client().GetInstance("nope", d); }).status(),
              StatusCode::kNotFound, {"not found: instance with name \"nope\""});
}

TEST_F(InstanceTest, AttachListDetachOnAStoppedInstance) {
  const std::string id = ControlInstance("node-1", "stopped");
  auto disk = CreateBlankDisk("pv-a");
  ASSERT_TRUE(disk.ok());
  auto attached = Attach(*this, "node-1", "pv-a");
  ASSERT_TRUE(attached.ok()) << attached.status().ToString();
  EXPECT_EQ(attached->state.status, oxide::backend::DiskStatus::kAttached);
  EXPECT_EQ(attached->state.instance, id);
  // Attaching again to the same instance succeeds (Oxide is idempotent here).
  EXPECT_TRUE(Attach(*this, id, disk->id).ok());

  auto page = Await<Page<Disk>>(
      [&](Done<Page<Disk>> done) { client().ListInstanceDisks(id, {}, std::move(done)); });
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 1U);
  EXPECT_EQ(page->items[0].name, "pv-a");
  auto by_name = Await<Page<Disk>>(
      [&](Done<Page<Disk>> done) { client().ListInstanceDisks("node-1", {}, std::move(done)); });
  ASSERT_TRUE(by_name.ok()) << by_name.status().ToString();
  EXPECT_EQ(by_name->items.size(), 1U);

  auto detached = Detach(*this, id, "pv-a");
  ASSERT_TRUE(detached.ok()) << detached.status().ToString();
  EXPECT_EQ(detached->state.status, oxide::backend::DiskStatus::kDetached);
  EXPECT_TRUE(detached->state.instance.empty());
  EXPECT_TRUE(Detach(*this, id, "pv-a").ok());  // detaching a detached disk succeeds
}

TEST_F(InstanceTest, AttachToARunningInstanceExplainsTheNoHotplugRule) {
  ControlInstance("node-1", "running");
  ASSERT_TRUE(CreateBlankDisk("pv-a").ok());
  ExpectError(Attach(*this, "node-1", "pv-a").status(), StatusCode::kFailedPrecondition,
              {"attach disk \"pv-a\" to instance \"node-1\"",
               "Oxide attaches and detaches disks only while the instance is stopped",
               "cannot attach disk: instance is not fully stopped", "(oxide request id "});
}

TEST_F(InstanceTest, DiskAttachedElsewhereIsFailedPrecondition) {
  ControlInstance("node-1", "stopped");
  ControlInstance("node-2", "stopped");
  ASSERT_TRUE(CreateBlankDisk("pv-a").ok());
  ASSERT_TRUE(Attach(*this, "node-1", "pv-a").ok());
  ExpectError(Attach(*this, "node-2", "pv-a").status(), StatusCode::kFailedPrecondition,
              {"at most one instance", "disk is attached to another instance"});
  ExpectError(Detach(*this, "node-2", "pv-a").status(), StatusCode::kFailedPrecondition,
              {"disk is attached to another instance"});
}

TEST_F(InstanceTest, ThirteenthDiskIsResourceExhausted) {
  ControlInstance("node-1", "stopped");
  for (int i = 0; i < 12; ++i) {
    const std::string name = "pv-" + std::to_string(i);
    ASSERT_TRUE(CreateBlankDisk(name).ok());
    ASSERT_TRUE(Attach(*this, "node-1", name).ok()) << i;
  }
  ASSERT_TRUE(CreateBlankDisk("pv-12").ok());
  ExpectError(Attach(*this, "node-1", "pv-12").status(), StatusCode::kResourceExhausted,
              {"at most 12 disks", "cannot attach more than 12 disks to instance"});
}

TEST_F(InstanceTest, MissingDiskOrInstanceIsNotFound) {
  ControlInstance("node-1", "stopped");
  ExpectError(Attach(*this, "node-1", "pv-missing").status(), StatusCode::kNotFound,
              {"not found: disk with name \"pv-missing\""});
  ExpectError(Attach(*this, "00000000-0000-4000-8000-000000000000", "pv-missing").status(),
              StatusCode::kNotFound, {"not found: instance with id"});
}

}  // namespace
}  // namespace backend_test
