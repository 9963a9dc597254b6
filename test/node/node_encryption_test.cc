// Encrypted volumes (LUKS2) through the real plugin binary on real loop devices: the header on
// the disk, the filesystem on the mapping, a wrong or missing passphrase refused, data kept across
// unstage/stage and plugin restarts, block volumes published as the mapping, nothing encrypted
// over data, no mapping left open that nothing uses, the passphrase in no log, file or command
// line, and a crash between luksFormat and mkfs. On kernels without device-mapper (this machine
// and CI) `cryptsetup open/status/close` are played by test/support/fake_cryptsetup.sh (real LUKS2
// header and passphrase check, mapping = a loop device at the data offset); with device-mapper the
// real cryptsetup runs. Root only (CTest label "root").
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "node_fixture.h"
#include "support/cryptsetup_double.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace oxide::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPassphrase = "correct horse battery staple \x01 9f3k";
constexpr const char* kOtherPassphrase = "not the passphrase of this volume";

// A serial of this test alone: a mapping left by a crashed run cannot collide with it.
std::string NewSerial() {
  std::random_device random;
  std::string serial = "csi-";
  const char* hex = "0123456789abcdef";
  for (int i = 0; i < 16; ++i)
    serial.push_back(hex[random() % 16]);
  return serial;
}

std::string Blkid(const std::string& node, const std::string& tag) {
  std::string out;
  Shell("blkid -p -o value -s " + tag + " " + node, &out);
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  return out;
}

std::string DeviceNumber(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return "";
  return std::to_string(major(info.st_rdev)) + ":" + std::to_string(minor(info.st_rdev));
}

std::string ReadBytes(const std::string& path, off_t offset, size_t size) {
  std::string bytes(size, '\0');
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  ssize_t n = pread(fd, bytes.data(), size, offset);
  close(fd);
  bytes.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return bytes;
}

void WriteBytes(const std::string& path, off_t offset, const std::string& bytes) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(pwrite(fd, bytes.data(), bytes.size(), offset), static_cast<ssize_t>(bytes.size()));
  fsync(fd);
  close(fd);
}

class EncryptionTest : public NodeTest {
 protected:
  void PrepareSetup(PluginSetup& setup) override {
    state_ = UseCryptsetupWrapper(setup);
    cryptsetup_ = CryptsetupCommand(setup);
    if (!KernelHasDeviceMapper()) {
      std::printf(
          "[ note ] no device-mapper in this kernel: cryptsetup open/status/close are "
          "played by test/support/fake_cryptsetup.sh\n");
    }
    serial_ = NewSerial();
    disk_name_ = serial_ + "-encrypted";
  }

  void TearDown() override {
    if (setup_) {
      StopPlugin();
      // Leftovers of a failed test: unmount, then close what is still open.
      std::vector<std::string> left = MountsUnder(setup_->File(""));
      std::sort(left.begin(), left.end(), [](auto& a, auto& b) { return a.size() > b.size(); });
      for (const std::string& path : left)
        Shell("umount -l " + path);
      Cryptsetup("close " + Mapping() + " 2>/dev/null");
      EXPECT_TRUE(left.empty()) << "mounts left behind, e.g. " << left.front();
    }
    NodeTest::TearDown();
  }

  std::string Mapping() const { return "oxide-csi-" + serial_; }
  std::string MapperPath() const { return "/dev/mapper/" + Mapping(); }
  bool MappingOpen() const { return fs::exists(MapperPath()); }

  grpc::Status StageEncrypted(const std::string& staging, const csi::v1::VolumeCapability& cap,
                              const std::string& passphrase = kPassphrase) {
    return Stage("vol-1", disk_name_, staging, cap, {{"encrypted", "true"}},
                 {{"encryptionPassphrase", passphrase}});
  }

  // Runs cryptsetup as the plugin does (the double, with the plugin's records, where it stands in).
  int Cryptsetup(const std::string& arguments) const {
    return Shell(cryptsetup_ + " " + arguments);
  }

  // Every command line the plugin ran cryptsetup with.
  std::string CommandLines() const { return ReadFile(state_ + "/argv.log"); }

  std::string state_, cryptsetup_, serial_, disk_name_;
};

TEST_F(EncryptionTest, TheDiskHoldsLuks2AndTheFilesystemLivesOnTheMapping) {
  LoopDisk& disk = AddDisk(serial_);
  const std::string staging = Path("staging/pv");
  const std::string target = Path("pods/p1/volume");
  auto capability = MountCapability("ext4");
  {
    grpc::Status st = StageEncrypted(staging, capability);
    ASSERT_TRUE(st.ok()) << st.error_message() << "\n" << plugin_->Log();
  }
  EXPECT_EQ(Blkid(disk.node(), "TYPE"), "crypto_LUKS");
  EXPECT_EQ(Blkid(disk.node(), "VERSION"), "2");
  std::string dump;
  Shell("cryptsetup luksDump " + disk.node(), &dump);
  EXPECT_NE(dump.find("argon2id"), std::string::npos) << dump;
  EXPECT_NE(dump.find("aes-xts-plain64"), std::string::npos) << dump;
  ASSERT_TRUE(MappingOpen());
  EXPECT_EQ(Blkid(MapperPath(), "TYPE"), "ext4");
  EXPECT_EQ(MountsUnder(Path("")).size(), 1U);

  ASSERT_TRUE(Publish("vol-1", staging, target, capability).ok());
  WriteFile(target + "/kept.txt", "kept through unstage and restarts");
  ASSERT_TRUE(Unpublish("vol-1", target).ok());
  ASSERT_TRUE(Unstage("vol-1", staging).ok());
  EXPECT_FALSE(MappingOpen()) << "NodeUnstage closes the mapping";
  EXPECT_TRUE(MountsUnder(Path("")).empty());

  // Staged again: opened, not formatted again; the data is there.
  ASSERT_TRUE(StageEncrypted(staging, capability).ok());
  ASSERT_TRUE(Publish("vol-1", staging, target, capability).ok());
  EXPECT_EQ(ReadFile(target + "/kept.txt"), "kept through unstage and restarts");

  // A plugin killed and started again keeps the open, mounted volume, and answers for it.
  KillPlugin();
  StartPlugin();
  EXPECT_TRUE(MappingOpen());
  EXPECT_TRUE(StageEncrypted(staging, capability).ok());
  EXPECT_TRUE(Publish("vol-1", staging, target, capability).ok());
  EXPECT_EQ(ReadFile(target + "/kept.txt"), "kept through unstage and restarts");
  ASSERT_TRUE(Unpublish("vol-1", target).ok());
  ASSERT_TRUE(Unstage("vol-1", staging).ok());
  EXPECT_FALSE(MappingOpen());
  EXPECT_EQ(Blkid(disk.node(), "TYPE"), "crypto_LUKS");

  // The passphrase went on a pipe only: in no command line, log or file of the plugin.
  const std::string lines = CommandLines();
  EXPECT_NE(lines.find("luksFormat"), std::string::npos) << lines;
  EXPECT_NE(lines.find("--key-file=-"), std::string::npos) << lines;
  EXPECT_EQ(lines.find(kPassphrase), std::string::npos) << lines;
  EXPECT_EQ(plugin_->Log().find(kPassphrase), std::string::npos);
  for (const auto& entry : fs::recursive_directory_iterator(Path(""))) {
    if (!entry.is_regular_file() || entry.path().extension() == ".img") continue;
    EXPECT_EQ(ReadFile(entry.path().string()).find(kPassphrase), std::string::npos) << entry.path();
  }
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::string cmdline = ReadFile((entry.path() / "cmdline").string());
    EXPECT_EQ(cmdline.find(kPassphrase), std::string::npos) << entry.path();
  }
}

TEST_F(EncryptionTest, XfsOnTheMappingMountsAfterAStageAgain) {
  AddDisk(serial_);
  auto capability = MountCapability("xfs");
  ASSERT_TRUE(StageEncrypted(Path("s"), capability).ok()) << plugin_->Log();
  EXPECT_EQ(Blkid(MapperPath(), "TYPE"), "xfs");
  WriteFile(Path("s/x"), "xfs data");
  ASSERT_TRUE(Unstage("vol-1", Path("s")).ok());
  ASSERT_TRUE(StageEncrypted(Path("s"), capability).ok());
  EXPECT_EQ(ReadFile(Path("s/x")), "xfs data");
  ASSERT_TRUE(Unstage("vol-1", Path("s")).ok());
}

// A restore or clone is a byte copy of the disk (Oxide copies blocks): the copy carries the LUKS
// header and opens with the same passphrase, beside its source.
class EncryptedCopyTest : public EncryptionTest,
                          public ::testing::WithParamInterface<std::string> {};

TEST_P(EncryptedCopyTest, ACopyOfTheDiskOpensWithTheSamePassphraseBesideItsSource) {
  LoopDisk& source = AddDisk(serial_);
  auto capability = MountCapability(GetParam());
  ASSERT_TRUE(StageEncrypted(Path("a"), capability).ok()) << plugin_->Log();
  WriteFile(Path("a/data"), "copied with the disk");
  ASSERT_TRUE(Unstage("vol-1", Path("a")).ok());

  const std::string copy_serial = NewSerial();
  LoopDisk& copy = AddDisk(copy_serial);
  ASSERT_EQ(Shell("dd if=" + source.node() + " of=" + copy.node() + " bs=1M status=none"), 0);
  ASSERT_TRUE(StageEncrypted(Path("a"), capability).ok());
  grpc::Status copied = Stage("vol-2", copy_serial + "-copy", Path("b"), capability,
                              {{"encrypted", "true"}}, {{"encryptionPassphrase", kPassphrase}});
  ASSERT_TRUE(copied.ok()) << copied.error_message() << "\n" << plugin_->Log();
  EXPECT_EQ(ReadFile(Path("b/data")), "copied with the disk");
  WriteFile(Path("b/data"), "changed in the copy");
  EXPECT_EQ(ReadFile(Path("a/data")), "copied with the disk");
  ASSERT_TRUE(Unstage("vol-2", Path("b")).ok());
  ASSERT_TRUE(Unstage("vol-1", Path("a")).ok());
  EXPECT_FALSE(fs::exists("/dev/mapper/oxide-csi-" + copy_serial));
}

INSTANTIATE_TEST_SUITE_P(FsTypes, EncryptedCopyTest, ::testing::Values("ext4", "xfs"));

TEST_F(EncryptionTest, AWrongPassphraseOpensNothingAndChangesNothing) {
  LoopDisk& disk = AddDisk(serial_);
  auto capability = MountCapability("ext4");
  ASSERT_TRUE(StageEncrypted(Path("s"), capability).ok());
  WriteFile(Path("s/data"), "data");
  ASSERT_TRUE(Unstage("vol-1", Path("s")).ok());
  const std::string uuid = Blkid(disk.node(), "UUID");

  grpc::Status wrong = StageEncrypted(Path("s"), capability, kOtherPassphrase);
  EXPECT_EQ(wrong.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(wrong.error_message().find("the passphrase does not open this volume"),
            std::string::npos)
      << wrong.error_message();
  EXPECT_EQ(wrong.error_message().find(kOtherPassphrase), std::string::npos);
  EXPECT_FALSE(MappingOpen());
  EXPECT_TRUE(MountsUnder(Path("")).empty());
  EXPECT_EQ(Blkid(disk.node(), "UUID"), uuid) << "the header is never rewritten";

  ASSERT_TRUE(StageEncrypted(Path("s"), capability).ok());
  EXPECT_EQ(ReadFile(Path("s/data")), "data");
  ASSERT_TRUE(Unstage("vol-1", Path("s")).ok());
  EXPECT_EQ(plugin_->Log().find(kOtherPassphrase), std::string::npos);
}

TEST_F(EncryptionTest, AMissingOrBadSecretIsInvalidArgumentBeforeTheDiskIsTouched) {
  LoopDisk& disk = AddDisk(serial_);
  auto capability = MountCapability("ext4");
  grpc::Status missing =
      Stage("vol-1", disk_name_, Path("s"), capability, {{"encrypted", "true"}}, {});
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(missing.error_message().find("encryptionPassphrase"), std::string::npos)
      << missing.error_message();
  EXPECT_NE(missing.error_message().find("node-stage-secret-name"), std::string::npos);

  grpc::Status empty = StageEncrypted(Path("s"), capability, "");
  EXPECT_EQ(empty.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  grpc::Status huge = StageEncrypted(Path("s"), capability, std::string(5000, 'p'));
  EXPECT_EQ(huge.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  grpc::Status odd = Stage("vol-1", disk_name_, Path("s"), capability, {{"encrypted", "yes"}},
                           {{"encryptionPassphrase", kPassphrase}});
  EXPECT_EQ(odd.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(odd.error_message().find("encrypted"), std::string::npos);

  EXPECT_EQ(Blkid(disk.node(), "TYPE"), "") << "the disk is still blank";
  EXPECT_TRUE(CommandLines().empty()) << CommandLines();
}

TEST_F(EncryptionTest, ADiskHoldingDataIsNeverEncryptedAndALuksDiskNeverStagedPlain) {
  LoopDisk& plain = AddDisk(serial_);
  ASSERT_EQ(Shell("mkfs.ext4 -q " + plain.node()), 0);
  const std::string uuid = Blkid(plain.node(), "UUID");
  auto capability = MountCapability("ext4");
  grpc::Status refused = StageEncrypted(Path("s"), capability);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("ext4 filesystem"), std::string::npos)
      << refused.error_message();
  EXPECT_EQ(Blkid(plain.node(), "UUID"), uuid);
  EXPECT_EQ(CommandLines().find("luksFormat"), std::string::npos);

  // The other way round: a LUKS disk staged as a plain volume is refused, header intact.
  const std::string other_serial = NewSerial();
  LoopDisk& encrypted = AddDisk(other_serial);
  ASSERT_EQ(Shell("printf someone-elses | cryptsetup luksFormat --batch-mode --type luks2 "
                  "--pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file=- " +
                  encrypted.node()),
            0);
  const std::string luks_uuid = Blkid(encrypted.node(), "UUID");
  grpc::Status plain_stage = Stage("vol-2", other_serial + "-x", Path("s2"), capability);
  EXPECT_EQ(plain_stage.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(plain_stage.error_message().find("crypto_LUKS"), std::string::npos)
      << plain_stage.error_message();
  EXPECT_EQ(Blkid(encrypted.node(), "UUID"), luks_uuid);
}

TEST_F(EncryptionTest, ABlockVolumeIsPublishedAsTheMappingNeverAsTheCiphertext) {
  LoopDisk& disk = AddDisk(serial_);
  auto capability = BlockCapability();
  ASSERT_TRUE(StageEncrypted(Path("s"), capability).ok()) << plugin_->Log();
  ASSERT_TRUE(MappingOpen());
  const std::string target = Path("pods/p/dev");
  ASSERT_TRUE(Publish("vol-1", Path("s"), target, capability).ok()) << plugin_->Log();
  EXPECT_EQ(DeviceNumber(target), DeviceNumber(MapperPath()));
  EXPECT_NE(DeviceNumber(target), DeviceNumber(disk.node()));
  const std::string pattern = "written through the published block device";
  WriteBytes(target, 0, pattern);
  EXPECT_EQ(ReadBytes(disk.node(), 0, 6), std::string("LUKS\xba\xbe", 6))
      << "the header is not where the pod writes";
  ASSERT_TRUE(Unpublish("vol-1", target).ok());
  ASSERT_TRUE(Unstage("vol-1", Path("s")).ok());
  EXPECT_FALSE(MappingOpen());

  // After a restart with the mapping gone (a reboot), a publish does not hand on the disk.
  ASSERT_TRUE(StageEncrypted(Path("s"), capability).ok());
  StopPlugin();
  ASSERT_EQ(Cryptsetup("close " + Mapping()), 0);
  StartPlugin();
  EXPECT_EQ(Publish("vol-1", Path("s"), target, capability).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_TRUE(StageEncrypted(Path("s"), capability).ok());
  ASSERT_TRUE(Publish("vol-1", Path("s"), target, capability).ok());
  EXPECT_EQ(ReadBytes(target, 0, pattern.size()), pattern);
  ASSERT_TRUE(Unpublish("vol-1", target).ok());
  ASSERT_TRUE(Unstage("vol-1", Path("s")).ok());
}

TEST_F(EncryptionTest, ARestartClosesMappingsThatNoVolumeUses) {
  AddDisk(serial_);
  auto capability = MountCapability("ext4");
  ASSERT_TRUE(StageEncrypted(Path("s"), capability).ok());
  ASSERT_TRUE(Unstage("vol-1", Path("s")).ok());
  // Opened behind the plugin's back (or left by a crash after an unstage's unmount).
  StopPlugin();
  LoopDisk& disk = *disks_.front();
  const std::string key_file = Path("key");  // the passphrase holds a control byte
  WriteFile(key_file, kPassphrase);
  ASSERT_EQ(Cryptsetup("open --key-file=- " + disk.node() + " " + Mapping() + " <" + key_file), 0);
  fs::remove(key_file);
  ASSERT_TRUE(MappingOpen());
  StartPlugin();
  EXPECT_FALSE(MappingOpen()) << plugin_->Log();
  EXPECT_NE(plugin_->Log().find("closed an encrypted mapping no staged volume uses"),
            std::string::npos);
}

// Where the double holds a luksFormat: after it finished (a crash between luksFormat and mkfs),
// or with the header written and no key slot yet (a crash inside luksFormat).
class EncryptionCrashTest : public EncryptionTest,
                            public ::testing::WithParamInterface<const char*> {
 protected:
  void PrepareSetup(PluginSetup& setup) override {
    EncryptionTest::PrepareSetup(setup);
    hold_ = setup.File("held-in-luksFormat");
    setup.env[GetParam()] = hold_;
  }
  std::string hold_;
};

TEST_P(EncryptionCrashTest, ACrashInOrAfterLuksFormatIsFinishedByTheRetry) {
  LoopDisk& disk = AddDisk(serial_);
  auto capability = MountCapability("ext4");
  // The stage runs until luksFormat has written the header, and is held there.
  std::thread stage([&] { StageEncrypted(Path("s"), capability); });
  ASSERT_TRUE(WaitUntil([&] { return fs::exists(hold_); }, std::chrono::seconds(60)));
  EXPECT_EQ(Blkid(disk.node(), "TYPE"), "crypto_LUKS");
  KillPlugin();
  stage.join();
  fs::remove(hold_);  // lets the held cryptsetup go; its plugin is gone
  setup_->env.erase(GetParam());
  StartPlugin();
  // The retry opens the header our luksFormat wrote and formats the mapping under the intent, or
  // (no key slot: nobody can have opened it) encrypts the disk again.
  grpc::Status retried = StageEncrypted(Path("s"), capability);
  ASSERT_TRUE(retried.ok()) << retried.error_message() << "\n" << plugin_->Log();
  EXPECT_EQ(Blkid(MapperPath(), "TYPE"), "ext4");
  WriteFile(Path("s/after"), "after the crash");
  ASSERT_TRUE(Unstage("vol-1", Path("s")).ok());
  ASSERT_TRUE(StageEncrypted(Path("s"), capability).ok());
  EXPECT_EQ(ReadFile(Path("s/after")), "after the crash");
  ASSERT_TRUE(Unstage("vol-1", Path("s")).ok());
}

INSTANTIATE_TEST_SUITE_P(Crashes, EncryptionCrashTest,
                         ::testing::Values("FAKE_CRYPTSETUP_HOLD_AFTER_FORMAT",
                                           "FAKE_CRYPTSETUP_HOLD_IN_FORMAT"));

TEST_F(EncryptionTest, AHeaderWithoutKeySlotsIsNeverEncryptedAgainWithoutOurIntent) {
  LoopDisk& disk = AddDisk(serial_);
  ASSERT_EQ(Shell("printf x | cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 "
                  "--pbkdf-force-iterations 1000 --key-file=- " +
                  disk.node() + " && cryptsetup luksKillSlot -q " + disk.node() + " 0 </dev/null"),
            0);
  const std::string uuid = Blkid(disk.node(), "UUID");
  for (auto capability : {MountCapability("ext4"), BlockCapability()}) {
    grpc::Status refused = StageEncrypted(Path("s"), capability);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(refused.error_message().find("without any key slot"), std::string::npos)
        << refused.error_message();
  }
  EXPECT_EQ(Blkid(disk.node(), "UUID"), uuid);
  EXPECT_EQ(CommandLines().find("luksFormat"), std::string::npos);
}

TEST_F(EncryptionTest, AHeaderAskingForMoreMemoryThanTheNodeHasIsNotOpened) {
  LoopDisk& disk = AddDisk(serial_);
  ASSERT_EQ(Shell("printf %s '" + std::string("plain passphrase") +
                  "' | cryptsetup luksFormat -q --type luks2 --pbkdf argon2id "
                  "--pbkdf-force-iterations 4 --pbkdf-memory 1048576 --key-file=- " +
                  disk.node()),
            0);
  grpc::Status refused = StageEncrypted(Path("s"), MountCapability("ext4"), "plain passphrase");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("1048576 KiB of memory"), std::string::npos)
      << refused.error_message();
  EXPECT_FALSE(MappingOpen());
}

TEST_F(EncryptionTest, AFailedStageLeavesNoMappingOpen) {
  AddDisk(serial_);
  ASSERT_TRUE(StageEncrypted(Path("s"), MountCapability("ext4")).ok());
  ASSERT_TRUE(Unstage("vol-1", Path("s")).ok());
  // The mapping opens, then the plan refuses: the filesystem is ext4, the call asks for xfs.
  grpc::Status refused = StageEncrypted(Path("s"), MountCapability("xfs"));
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << refused.error_message();
  EXPECT_FALSE(MappingOpen()) << plugin_->Log();
  EXPECT_TRUE(MountsUnder(Path("")).empty());
}

TEST_F(EncryptionTest, AnUnstageAfterARebootFindsNoMappingAndUnmountsNothingElse) {
  AddDisk(serial_);
  ASSERT_TRUE(StageEncrypted(Path("s"), MountCapability("ext4")).ok());
  StopPlugin();
  // A reboot: the mount and the mapping are gone, the row stays.
  ASSERT_EQ(Shell("umount " + Path("s")), 0);
  ASSERT_EQ(Cryptsetup("close " + Mapping()), 0);
  StartPlugin();
  EXPECT_TRUE(Unstage("vol-1", Path("s")).ok()) << plugin_->Log();
  EXPECT_FALSE(fs::exists(Path("s")));
}

// A plain block volume whose pod put LUKS on it itself is the pod's business: it is published as
// its disk, like any plain block volume.
TEST_F(EncryptionTest, APlainBlockVolumeHoldingLuksIsPublishedAsItsDisk) {
  LoopDisk& disk = AddDisk(serial_);
  ASSERT_EQ(Shell("printf x | cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 "
                  "--pbkdf-force-iterations 1000 --key-file=- " +
                  disk.node()),
            0);
  auto capability = BlockCapability();
  ASSERT_TRUE(Stage("vol-1", disk_name_, Path("s"), capability).ok());
  ASSERT_TRUE(Publish("vol-1", Path("s"), Path("t"), capability).ok()) << plugin_->Log();
  EXPECT_EQ(DeviceNumber(Path("t")), DeviceNumber(disk.node()));
  ASSERT_TRUE(Unpublish("vol-1", Path("t")).ok());
  ASSERT_TRUE(Unstage("vol-1", Path("s")).ok());
}

}  // namespace
}  // namespace oxide::testing
