// Syntax checks: Oxide names (exact Oxide messages), UUIDs, CSI driver names, endpoints.
#include "config/validation.h"

#include <gtest/gtest.h>

namespace oxide {
namespace {

TEST(Validation, OxideNamesFollowTheServerRules) {
  EXPECT_EQ(OxideNameProblem("pv-abc-123"), "");
  EXPECT_EQ(OxideNameProblem(""), "name requires at least one character");
  EXPECT_EQ(OxideNameProblem(std::string(64, 'a')), "name may contain at most 63 characters");
  EXPECT_EQ(OxideNameProblem(std::string(63, 'a')), "");
  EXPECT_EQ(OxideNameProblem("1abc"), "name must begin with an ASCII lowercase character");
  EXPECT_EQ(OxideNameProblem("aBc"),
            "name contains invalid character: \"B\" (allowed characters are lowercase ASCII, "
            "digits, and \"-\")");
  EXPECT_EQ(OxideNameProblem("abc-"), "name cannot end with \"-\"");
  EXPECT_EQ(OxideNameProblem("abcdef12-1234-1234-1234-123456789012"),
            "name cannot be a UUID to avoid ambiguity with IDs");
}

TEST(Validation, Uuids) {
  EXPECT_TRUE(IsUuid("6f0c4e3b-1d2a-4c5b-9e8f-0a1b2c3d4e5f"));
  EXPECT_TRUE(IsUuid("6F0C4E3B-1D2A-4C5B-9E8F-0A1B2C3D4E5F"));
  EXPECT_FALSE(IsUuid("6f0c4e3b1d2a4c5b9e8f0a1b2c3d4e5f"));
  EXPECT_FALSE(IsUuid("6f0c4e3b-1d2a-4c5b-9e8f-0a1b2c3d4e5g"));
  EXPECT_FALSE(IsUuid(""));
}

TEST(Validation, DriverNames) {
  EXPECT_TRUE(IsValidDriverName("csi.oxide.computer"));
  EXPECT_TRUE(IsValidDriverName("a"));
  EXPECT_FALSE(IsValidDriverName(""));
  EXPECT_FALSE(IsValidDriverName(".csi"));
  EXPECT_FALSE(IsValidDriverName("csi-"));
  EXPECT_FALSE(IsValidDriverName("csi_oxide"));
  EXPECT_FALSE(IsValidDriverName(std::string(64, 'a')));
}

TEST(Validation, Endpoints) {
  EXPECT_EQ(*SocketPathFromEndpoint("unix:///csi/csi.sock"), "/csi/csi.sock");
  EXPECT_EQ(*SocketPathFromEndpoint("/csi/csi.sock"), "/csi/csi.sock");
  EXPECT_FALSE(SocketPathFromEndpoint("unix://csi.sock").ok());
  EXPECT_FALSE(SocketPathFromEndpoint("tcp://127.0.0.1:1").ok());
  EXPECT_FALSE(SocketPathFromEndpoint("/csi/").ok());
  EXPECT_FALSE(SocketPathFromEndpoint("/csi//csi.sock").ok());
  EXPECT_FALSE(SocketPathFromEndpoint("").ok());
  EXPECT_EQ(ParentDirectory("/a/b/c.sock"), "/a/b");
}

TEST(Validation, NameFormNodeIds) {
  EXPECT_EQ(NodeIdForInstanceName("worker-1"), "name:worker-1");
  EXPECT_EQ(*InstanceNameOfNodeId("name:worker-1"), "worker-1");
  EXPECT_FALSE(InstanceNameOfNodeId("worker-1"));
  EXPECT_FALSE(InstanceNameOfNodeId("name:"));
  EXPECT_FALSE(InstanceNameOfNodeId("name:Worker_1"));
  EXPECT_FALSE(InstanceNameOfNodeId("name:worker.example"));
  EXPECT_FALSE(InstanceNameOfNodeId("name:" + std::string(64, 'a')));
  EXPECT_FALSE(InstanceNameOfNodeId("name:6f0c4e3b-1d2a-4c5b-9e8f-0a1b2c3d4e5f"));
  EXPECT_LE(NodeIdForInstanceName(std::string(63, 'a')).size(), 192U);  // CSI's node id limit
}

TEST(Validation, KubernetesNodeNames) {
  EXPECT_TRUE(IsKubernetesNodeName("worker-1"));
  EXPECT_TRUE(IsKubernetesNodeName("ip-10-0-0-1.eu-west-1.compute.internal"));
  EXPECT_FALSE(IsKubernetesNodeName(""));
  EXPECT_FALSE(IsKubernetesNodeName("Worker"));
  EXPECT_FALSE(IsKubernetesNodeName("a..b"));
  EXPECT_FALSE(IsKubernetesNodeName("-a"));
  EXPECT_FALSE(IsKubernetesNodeName("a/b"));
  EXPECT_FALSE(IsKubernetesNodeName(std::string(254, 'a')));
}

}  // namespace
}  // namespace oxide
