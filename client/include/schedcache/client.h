// The schedcache C++ client library: a thin, typed face over the
// schedcache.v1.SchedCache gRPC API (proto/schedcache/v1/schedcache.proto).
// Results are absl::Status / absl::StatusOr carrying the server's canonical
// code and message; requests and responses are the API's messages.
//
//   schedcache::client::Options options;
//   options.address = "unix:/run/schedcache/schedcached.sock";
//   auto client = schedcache::client::Client::Connect(options);
//   auto writer = (*client)->StartIngest("default");
//   writer->Add(sample);            // batched: flushes on size and on time
//   auto summary = writer->Finish();
//   auto answer = (*client)->Recommend(request);
//
// Thread contract: Client is thread-safe (calls may run concurrently).
// IngestWriter is thread-safe (its timer flushes from its own thread).
// PreferenceWatch and ScanWatch are thread-compatible, except Cancel, which
// may be called from any thread.
#ifndef SCHEDCACHE_CLIENT_INCLUDE_SCHEDCACHE_CLIENT_H_
#define SCHEDCACHE_CLIENT_INCLUDE_SCHEDCACHE_CLIENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/service_defaults.h"
#include "events/event.h"
#include "schedcache/v1/schedcache.grpc.pb.h"
#include "schedcache/v1/schedcache.pb.h"

namespace schedcache::client {

// TlsOptions: TLS to a server's TCP listener, as PEM text (the CLI reads
// it from the files --tls-ca, --tls-cert and --tls-key name).
struct TlsOptions {
  // CA certificates the server's certificate must chain to; empty: the
  // system's roots.
  std::string root_certs;
  // Client certificate chain and its private key, for a server that
  // requires one (mutual TLS); both or neither.
  std::string cert_chain;
  std::string private_key;
  // Name the server's certificate must carry; empty: the host of
  // `address`.
  std::string server_name;
};

// Options says where the server is, how to secure the channel and how long
// a call may take.
struct Options {
  // "unix:PATH" or "HOST:PORT".
  std::string address = kDefaultServerAddress;
  // Set: the channel uses TLS; unset: plain (Unix sockets, loopback).
  std::optional<TlsOptions> tls;
  // Deadline of each unary call, and of connecting.
  absl::Duration deadline = absl::Seconds(10);
};

// IngestOptions says when an IngestWriter sends its batch.
struct IngestOptions {
  // Send when a batch holds this many events (the server's default limit
  // per batch is 65536).
  int max_batch_events = 1024;
  // Send at the latest this long after the first event of a batch was
  // added, even when no further event comes.
  absl::Duration max_delay = absl::Milliseconds(100);
};

// WatchOptions says what a PreferenceWatch asks for, and whether it
// outlives its stream.
struct WatchOptions {
  // Start with a snapshot: SnapshotStart, an entry per tracked process and
  // policy, then Synced (see WatchPreferencesRequest).
  bool snapshot = false;
  // Filters: one policy (empty: all) and these processes (empty: all).
  std::string policy;
  std::vector<int32_t> tgids;
  // Reconnect: when the stream ends UNAVAILABLE (the server stopped,
  // restarted, or cannot be reached), open it again, after a backoff that
  // doubles from initial_backoff up to max_backoff, resuming after the
  // last change or Synced read. The server then replays what was missed,
  // or sends a fresh snapshot whose SnapshotStart says why (a restarted
  // server's session is a new incarnation). While reconnecting, NOT_FOUND
  // (the session is not there yet) is retried too; on an attached stream
  // it ends the watch (the session was deleted).
  bool reconnect = false;
  absl::Duration initial_backoff = absl::Milliseconds(50);
  absl::Duration max_backoff = absl::Seconds(5);
};

// ScanWatchOptions filters what a ScanWatch hears.
struct ScanWatchOptions {
  // One policy (empty: all) and these processes (empty: all).
  std::string policy;
  std::vector<int32_t> tgids;
};

class IngestWriter;
class PreferenceWatch;
class ScanWatch;

class Client {
 public:
  // Connect makes a channel to `options.address`. Connection is lazy: an
  // unreachable server shows up as Unavailable on the first call.
  static std::unique_ptr<Client> Connect(const Options& options);

  // WaitForReady waits up to the deadline for the channel to connect.
  // Returns DeadlineExceeded when it does not.
  absl::Status WaitForReady() const;

  // GetTopology returns the host's topology (`session` empty) or a
  // session's.
  absl::StatusOr<v1::GetTopologyResponse> GetTopology(
      absl::string_view session = "") const;
  absl::StatusOr<v1::ListPoliciesResponse> ListPolicies() const;
  absl::StatusOr<v1::Session> CreateSession(
      const v1::CreateSessionRequest& request) const;
  absl::StatusOr<v1::Session> GetSession(absl::string_view session) const;
  absl::StatusOr<v1::ListSessionsResponse> ListSessions() const;
  absl::Status DeleteSession(absl::string_view session) const;
  absl::StatusOr<v1::RecommendResponse> Recommend(
      const v1::RecommendRequest& request) const;
  absl::StatusOr<v1::Report> GetReport(absl::string_view session) const;

  // StartIngest opens an Ingest stream to `session` (empty: "default").
  // The stream has no deadline; it lives until IngestWriter::Finish. It
  // first asks GetSession whether the server takes the fixed-width columns
  // (Session.takes_fixed_width_columns) and sends them if so, the packed
  // form otherwise; a process's comm goes only when it changes on the
  // stream. A sample's cache_group goes in either form, as a column only in
  // the batches where some sample names a group (client/lib/
  // columns_encoder.h).
  std::unique_ptr<IngestWriter> StartIngest(
      absl::string_view session, const IngestOptions& options = {}) const;

  // Watch opens a WatchPreferences stream to `session` (empty: "default")
  // and waits until the server has attached it to the session, so every
  // change after Watch returns is delivered. Errors (e.g. NotFound)
  // surface from PreferenceWatch::Next/Finish. The Client must outlive the
  // watch.
  std::unique_ptr<PreferenceWatch> Watch(
      absl::string_view session, const WatchOptions& options = {}) const;
  // WatchScans opens a WatchScans stream to `session` (empty: "default")
  // and waits until the server has attached it, so every scan the session
  // executes after WatchScans returns is delivered (or counted in a
  // ScansDropped). Errors surface from ScanWatch::Next/Finish. The Client
  // must outlive the watch.
  std::unique_ptr<ScanWatch> WatchScans(
      absl::string_view session, const ScanWatchOptions& options = {}) const;

  const Options& options() const { return options_; }

 private:
  Client(Options options, std::unique_ptr<v1::SchedCache::Stub> stub,
         std::shared_ptr<grpc::Channel> channel);

  const Options options_;
  const std::shared_ptr<grpc::Channel> channel_;
  const std::unique_ptr<v1::SchedCache::Stub> stub_;
};

// IngestWriter batches samples, hand-overs, process exits and kernel
// decisions onto one Ingest stream, in the order added.
class IngestWriter {
 public:
  ~IngestWriter();  // cancels the stream unless Finish was called
  IngestWriter(const IngestWriter&) = delete;
  IngestWriter& operator=(const IngestWriter&) = delete;

  // Add appends an event; the batch is sent when full (blocking while the
  // server applies earlier batches). After the stream has failed, returns
  // an error; Finish then gives the server's status.
  absl::Status Add(const Sample& sample);
  absl::Status Add(const HandOver& handover);
  absl::Status Add(const ProcessExit& exit);
  absl::Status Add(const ProcessStart& start);
  absl::Status Add(const KernelDecision& decision);
  // AddLosses adds a live collector's loss increments to the next batch
  // (IngestBatch.collector_losses), which the session sums for its report.
  // A batch that carries losses is sent even when it holds no event.
  void AddLosses(const v1::CollectorLosses& losses);
  // Flush sends the current batch now.
  absl::Status Flush();
  // Finish sends what is left, closes the stream and returns the server's
  // summary (exact accepted/rejected counts), or the stream's error with
  // the server's code and message; IngestSummaryOf(error) then tells what
  // the server applied before it (e.g. UNAVAILABLE, the server stopping).
  absl::StatusOr<v1::IngestSummary> Finish();

 private:
  friend class Client;
  class Impl;
  explicit IngestWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// IngestSummaryOf returns the summary carried by the error of a failed
// Ingest stream (IngestWriter::Finish): exactly the events the server
// applied before the error. std::nullopt when `status` carries none (OK,
// another call's error, or a stream that failed before the server saw it).
std::optional<v1::IngestSummary> IngestSummaryOf(const absl::Status& status);

// PreferenceWatch reads a WatchPreferences stream: the messages in the
// server's order (see WatchPreferencesRequest in the .proto). A watcher
// that keeps state replaces all of it at every SnapshotStart: one comes
// first when WatchOptions::snapshot asks, and again after a reconnect
// whose resume the server could not serve (a resync; its cause says why).
//
//   auto watch = client->Watch("default", {.snapshot = true, .reconnect = true});
//   while (auto event = watch->Next()) {
//     if (event->has_snapshot_start()) held.clear();
//     if (event->has_change()) held[key(event->change())] = event->change();
//   }
class PreferenceWatch {
 public:
  ~PreferenceWatch();  // cancels the stream
  PreferenceWatch(const PreferenceWatch&) = delete;
  PreferenceWatch& operator=(const PreferenceWatch&) = delete;

  // attached is true when the server attached the first stream to its
  // session; false when it refused it (Next then returns std::nullopt and
  // Finish the reason, e.g. NotFound; with reconnect, an UNAVAILABLE
  // refusal is retried by Next instead).
  bool attached() const;
  // Next blocks for the next message (reconnecting first, with
  // WatchOptions::reconnect, when the stream broke); std::nullopt when the
  // watch ended (see Finish).
  std::optional<v1::WatchPreferencesResponse> Next();
  // Finish returns how the watch ended: NotFound when the session was
  // deleted, Unavailable when the server stopped (without reconnect),
  // Cancelled after Cancel. REQUIRES: Next returned std::nullopt.
  absl::Status Finish();
  // Cancel ends the watch from any thread, also while Next waits to
  // reconnect; Next then returns std::nullopt.
  void Cancel();
  // reconnects counts the streams opened again after one broke.
  int reconnects() const;

 private:
  friend class Client;
  class Impl;
  explicit PreferenceWatch(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ScanWatch reads a WatchScans stream: every executed scan of the session
// (its filters applied) in the order the session ran them, and a
// ScansDropped where the server dropped scans for this slow reader. It
// does not reconnect: scans are not retained, so a broken stream cannot
// be resumed without a gap.
//
//   auto scans = client->WatchScans("ab-1", {.policy = "visited-scan"});
//   while (auto event = scans->Next()) {
//     if (event->has_scan()) Trace(event->scan());
//     if (event->has_dropped()) lost += event->dropped().count();
//   }
//   if (scans->Finish().code() != absl::StatusCode::kNotFound) ...
class ScanWatch {
 public:
  ~ScanWatch();  // cancels the stream
  ScanWatch(const ScanWatch&) = delete;
  ScanWatch& operator=(const ScanWatch&) = delete;

  // attached is true when the server attached the stream to its session;
  // false when it refused it (Next then returns std::nullopt and Finish
  // the reason, e.g. NotFound or InvalidArgument for an unknown policy).
  bool attached() const;
  // Next blocks for the next message; std::nullopt when the stream ended
  // (see Finish).
  std::optional<v1::WatchScansResponse> Next();
  // Finish returns how the stream ended: NotFound when the session was
  // deleted (after every scan queued before), Unavailable when the server
  // stopped, Cancelled after Cancel. REQUIRES: Next returned std::nullopt.
  absl::Status Finish() const;
  // Cancel ends the stream from any thread; Next then returns std::nullopt.
  void Cancel();

 private:
  friend class Client;
  class Impl;
  explicit ScanWatch(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace schedcache::client

#endif  // SCHEDCACHE_CLIENT_INCLUDE_SCHEDCACHE_CLIENT_H_
