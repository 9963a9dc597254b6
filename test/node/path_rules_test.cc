// Unit tests of the path rules: absolute, normalized, not a system location.
#include "node/path_rules.h"

#include <gtest/gtest.h>

namespace oxide::node {
namespace {

TEST(PathRules, AcceptsOrdinaryVolumePaths) {
  for (const char* path : {"/var/lib/kubelet/pods/abc/volumes/kubernetes.io~csi/pv/mount",
                           "/var/lib/kubelet/plugins/kubernetes.io/csi/staging/x", "/tmp/a",
                           "/mnt/volume", "/run/x/y", "/a"}) {
    EXPECT_TRUE(CheckVolumePath("target_path", path).ok()) << path;
  }
}

TEST(PathRules, RejectsBadPathsWithTheReason) {
  struct Case {
    std::string path;
    const char* reason;
  };
  for (const Case& c : std::vector<Case>{{"", "is required"},
                                         {"relative/path", "not an absolute path"},
                                         {"/a/../etc", "not normalized"},
                                         {"/a/./b", "not normalized"},
                                         {"/a//b", "not normalized"},
                                         {"/a/b/", "not normalized"},
                                         {"/", "system location"},
                                         {"/etc", "system location"},
                                         {"/etc/kubernetes", "inside the system location /etc"},
                                         {"/dev/sda", "inside the system location /dev"},
                                         {"/proc/1", "inside the system location /proc"},
                                         {"/sys/block", "inside the system location /sys"},
                                         {"/usr/lib/x", "inside the system location /usr"},
                                         {"/boot", "system location"},
                                         {"/var", "system location"},
                                         {"/var/lib", "system location"},
                                         {"/tmp", "system location"},
                                         {std::string("/a\0b", 4), "NUL"},
                                         {"/" + std::string(5000, 'a'), "PATH_MAX"}}) {
    Status st = CheckVolumePath("target_path", c.path);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.path;
    EXPECT_NE(st.message().find(c.reason), std::string::npos) << c.path << ": " << st.message();
    EXPECT_NE(st.message().find("target_path"), std::string::npos) << st.message();
  }
}

TEST(PathRules, SimilarNamesOutsideSystemTreesAreFine) {
  EXPECT_TRUE(CheckVolumePath("p", "/etcetera").ok());
  EXPECT_TRUE(CheckVolumePath("p", "/devices/x").ok());
  EXPECT_TRUE(CheckVolumePath("p", "/var/lib/kubelet/x").ok());
}

}  // namespace
}  // namespace oxide::node
