// sim_bench: load generator for oxide-sim. Starts the simulator (or targets --url/--pid),
// creates one disk, then keeps N keep-alive connections busy with GET /v1/disks/{id}
// (libcurl multi, one easy handle per connection) and prints requests/s, p50/p99 latency
// and the simulator's RSS. Single-threaded.
#include <curl/curl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int connections = 256;
  double seconds = 10;
  std::string url;  // empty: start our own oxide-sim
  pid_t pid = 0;
  std::string token = "oxide-token-bench";
};

struct Slot {
  CURL* easy = nullptr;
  Clock::time_point started;
  std::string sink;
};

size_t discard(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->assign(data, size * count);
  return size * count;
}

std::string status_field(pid_t pid, const char* field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) {
      line.erase(0, std::strlen(field) + 1);
      line.erase(0, line.find_first_not_of(" \t"));
      return line;
    }
  }
  return "?";
}

pid_t start_sim(const std::string& token, int* port) {
  int out[2];
  if (::pipe(out) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::execl(OXIDE_SIM_BINARY, OXIDE_SIM_BINARY, "--port", "0", "--token", token.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string line;
  char c = 0;
  while (::read(out[0], &c, 1) == 1 && c != '\n')
    line.push_back(c);
  ::close(out[0]);
  *port = line.empty() ? 0 : std::stoi(line);
  return pid;
}

std::string create_disk(const std::string& base, const std::string& token) {
  CURL* easy = curl_easy_init();
  std::string body;
  const std::string url = base + "/v1/disks?project=demo";
  const std::string payload =
      R"({"name":"bench-disk","description":"","size":1073741824,"disk_backend":{"type":"distributed","disk_source":{"type":"blank","block_size":4096}}})";
  curl_slist* headers = curl_slist_append(nullptr, ("Authorization: Bearer " + token).c_str());
  headers = curl_slist_append(headers, "Content-Type: application/json");
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(easy, CURLOPT_POSTFIELDS, payload.c_str());
  curl_easy_setopt(
      easy, CURLOPT_WRITEFUNCTION, +[](char* d, size_t s, size_t n, void* u) {
        static_cast<std::string*>(u)->append(d, s * n);
        return s * n;
      });
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);
  curl_easy_perform(easy);
  curl_slist_free_all(headers);
  curl_easy_cleanup(easy);
  const size_t at = body.find("\"id\":\"");
  return at == std::string::npos ? "" : body.substr(at + 6, 36);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--connections")
      options.connections = std::stoi(argv[i + 1]);
    else if (flag == "--seconds")
      options.seconds = std::stod(argv[i + 1]);
    else if (flag == "--url")
      options.url = argv[i + 1];
    else if (flag == "--pid")
      options.pid = std::stoi(argv[i + 1]);
    else if (flag == "--token")
      options.token = argv[i + 1];
    else {
      std::fprintf(
          stderr, "usage: sim_bench [--connections N] [--seconds S] [--url U --pid P --token T]\n");
      return 2;
    }
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  pid_t own = 0;
  if (options.url.empty()) {
    int port = 0;
    own = start_sim(options.token, &port);
    if (own <= 0 || port == 0) {
      std::fprintf(stderr, "sim_bench: cannot start %s\n", OXIDE_SIM_BINARY);
      return 1;
    }
    options.url = "http://127.0.0.1:" + std::to_string(port);
    options.pid = own;
  }
  const std::string disk_id = create_disk(options.url, options.token);
  if (disk_id.empty()) {
    std::fprintf(stderr, "sim_bench: could not create the disk\n");
    return 1;
  }
  const std::string target = options.url + "/v1/disks/" + disk_id;
  const std::string auth = "Authorization: Bearer " + options.token;
  curl_slist* headers = curl_slist_append(nullptr, auth.c_str());

  CURLM* multi = curl_multi_init();
  curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(options.connections));
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, static_cast<long>(options.connections));
  std::vector<Slot> slots(static_cast<size_t>(options.connections));
  for (Slot& slot : slots) {
    slot.easy = curl_easy_init();
    curl_easy_setopt(slot.easy, CURLOPT_URL, target.c_str());
    curl_easy_setopt(slot.easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(slot.easy, CURLOPT_WRITEFUNCTION, &discard);
    curl_easy_setopt(slot.easy, CURLOPT_WRITEDATA, &slot.sink);
    curl_easy_setopt(slot.easy, CURLOPT_PRIVATE, &slot);
    slot.started = Clock::now();
    curl_multi_add_handle(multi, slot.easy);
  }
  std::vector<double> latencies_us;
  latencies_us.reserve(1 << 22);
  long errors = 0;
  const auto begin = Clock::now();
  const auto deadline = begin + std::chrono::duration<double>(options.seconds);
  int running = 0;
  size_t active = slots.size();
  while (active > 0) {
    curl_multi_perform(multi, &running);
    int queued = 0;
    while (CURLMsg* message = curl_multi_info_read(multi, &queued)) {
      if (message->msg != CURLMSG_DONE) continue;
      Slot* slot = nullptr;
      curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &slot);
      long status = 0;
      curl_easy_getinfo(slot->easy, CURLINFO_RESPONSE_CODE, &status);
      const auto now = Clock::now();
      if (message->data.result != CURLE_OK || status != 200)
        ++errors;
      else
        latencies_us.push_back(
            std::chrono::duration<double, std::micro>(now - slot->started).count());
      curl_multi_remove_handle(multi, slot->easy);
      if (now < deadline) {
        slot->started = now;
        curl_multi_add_handle(multi, slot->easy);
      } else {
        --active;
      }
    }
    if (active > 0) curl_multi_poll(multi, nullptr, 0, 100, nullptr);
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
  std::sort(latencies_us.begin(), latencies_us.end());
  auto percentile = [&](double p) {
    if (latencies_us.empty()) return 0.0;
    return latencies_us[static_cast<size_t>(p * static_cast<double>(latencies_us.size() - 1))];
  };
  std::printf("connections: %d, duration: %.1f s, target: GET /v1/disks/{id}\n",
              options.connections, elapsed);
  std::printf("requests ok: %zu, errors: %ld\n", latencies_us.size(), errors);
  std::printf("throughput: %.0f req/s\n", static_cast<double>(latencies_us.size()) / elapsed);
  std::printf("latency p50: %.2f ms, p99: %.2f ms, max: %.2f ms\n", percentile(0.50) / 1000,
              percentile(0.99) / 1000, percentile(1.0) / 1000);
  if (options.pid > 0) {
    std::printf("oxide-sim (pid %d) VmRSS: %s, VmHWM: %s\n", options.pid,
                status_field(options.pid, "VmRSS:").c_str(),
                status_field(options.pid, "VmHWM:").c_str());
  }
  for (Slot& slot : slots)
    curl_easy_cleanup(slot.easy);
  curl_multi_cleanup(multi);
  curl_slist_free_all(headers);
  if (own > 0) {
    ::kill(own, SIGTERM);
    int status = 0;
    ::waitpid(own, &status, 0);
  }
  curl_global_cleanup();
  return errors == 0 ? 0 : 1;
}
