#include "sim_fixture.h"

namespace sim_test {

nlohmann::json SimTest::create_disk(const std::string& name, uint64_t gib, int block_size,
                                    const std::string& project) {
  Reply reply = api().post("/v1/disks?project=" + project, blank_disk(name, gib, block_size));
  EXPECT_EQ(reply.status, 201) << reply.body;
  return reply.json();
}

nlohmann::json SimTest::control_instance(const std::string& name, const std::string& run_state,
                                         bool guest_local, const std::string& project) {
  Reply reply = api().post("/__sim/instances", {{"project", project},
                                                {"name", name},
                                                {"run_state", run_state},
                                                {"guest_local", guest_local}});
  EXPECT_EQ(reply.status, 201) << reply.body;
  return reply.json();
}

nlohmann::json SimTest::attach(const std::string& instance, const std::string& disk, long expect) {
  Reply reply =
      api().post("/v1/instances/" + instance + "/disks/attach?project=demo", {{"disk", disk}});
  EXPECT_EQ(reply.status, expect) << reply.body;
  return reply.json();
}

nlohmann::json SimTest::disk_state(const std::string& name) {
  Reply reply = api().get("/v1/disks/" + name + "?project=demo");
  EXPECT_EQ(reply.status, 200) << reply.body;
  return reply.json()["state"];
}

void expect_error(const Reply& reply, long status, const char* error_code,
                  const std::string& message) {
  EXPECT_EQ(reply.status, status) << reply.body;
  const nlohmann::json body = reply.json();
  ASSERT_TRUE(body.is_object()) << reply.body;
  EXPECT_EQ(body.value("message", "<none>"), message) << reply.body;
  if (error_code == nullptr) {
    EXPECT_FALSE(body.contains("error_code")) << reply.body;
  } else {
    EXPECT_EQ(body.value("error_code", "<none>"), error_code) << reply.body;
  }
  EXPECT_EQ(body.value("request_id", ""), reply.header("x-request-id")) << reply.body;
  EXPECT_EQ(body.value("request_id", "").size(), 36U);
}

}  // namespace sim_test
