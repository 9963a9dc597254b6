// --metrics-address values: what is accepted, and the message for what is not.
#include "metrics/listen_address.h"

#include <gtest/gtest.h>

namespace oxide::metrics {
namespace {

TEST(ListenAddress, AcceptsIpv4Ipv6AndAnEmptyHost) {
  auto v4 = ParseListenAddress("127.0.0.1:9810");
  ASSERT_TRUE(v4.ok()) << v4.status().ToString();
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 9810);
  auto v6 = ParseListenAddress("[::1]:9810");
  ASSERT_TRUE(v6.ok()) << v6.status().ToString();
  EXPECT_EQ(v6->host, "::1");
  auto any = ParseListenAddress(":0");
  ASSERT_TRUE(any.ok()) << any.status().ToString();
  EXPECT_EQ(any->host, "0.0.0.0");
  EXPECT_EQ(any->port, 0);
}

TEST(ListenAddress, RefusesWhatIsNotHostColonPort) {
  for (const char* bad :
       {"9810", "localhost:9810", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:98x0", "[::1:9810",
        "[zz]:1", "127.0.0.1:-1", "127.0.0.1:0009810"}) {
    auto parsed = ParseListenAddress(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_NE(ParseListenAddress("localhost:9810").status().message().find("names are not resolved"),
            std::string::npos);
}

}  // namespace
}  // namespace oxide::metrics
