#include "tests/server_fixture.h"

#include <cstdlib>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace schedcache::test_support {

TempDir::TempDir() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "schedcache-test-XXXXXX")
          .string();
  if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

absl::StatusOr<std::unique_ptr<TestServer>> TestServer::Start(
    Transport transport, ServerOptions options) {
  auto test = std::make_unique<TestServer>();
  test->dir = std::make_unique<TempDir>();
  if (test->dir->path().empty()) {
    return absl::InternalError("cannot create a temporary directory");
  }
  options.listen = {transport == Transport::kUnix
                        ? absl::StrCat("unix:", test->dir->path(), "/s.sock")
                        : std::string("127.0.0.1:0")};
  ASSIGN_OR_RETURN(test->server, Server::Start(std::move(options)));
  client::Options client_options;
  client_options.address = test->server->addresses().front();
  test->client = client::Client::Connect(client_options);
  RETURN_IF_ERROR(test->client->WaitForReady());
  return test;
}

std::vector<Sample> PreferLlc0Events(int tgid, int64_t t0) {
  constexpr int64_t kMs = 1'000'000;
  return {SampleAt(t0, 0, tgid, tgid + 1, 1 * kMs, true, /*nr_threads=*/2),
          SampleAt(t0 + 20 * kMs, 0, tgid, tgid + 1, 1 * kMs, true)};
}

std::vector<Sample> ScanningProcessesEvents(int processes, int64_t t0) {
  std::vector<Sample> first_ticks;
  std::vector<Sample> second_ticks;
  for (int k = 0; k < processes; ++k) {
    const std::vector<Sample> events = PreferLlc0Events(100 + 10 * k, t0);
    first_ticks.push_back(events[0]);
    second_ticks.push_back(events[1]);
  }
  first_ticks.insert(first_ticks.end(), second_ticks.begin(),
                     second_ticks.end());
  return first_ticks;
}

v1::CreateSessionRequest TwoLlcSessionRequest(const std::string& name) {
  v1::CreateSessionRequest request;
  request.set_name(name);
  request.mutable_topology()->set_spec(kTwoLlcTopology);
  request.add_policies("full-scan");
  request.add_policies("visited-scan");
  request.add_policies("none");
  return request;
}

}  // namespace schedcache::test_support
