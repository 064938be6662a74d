#include "server/metrics_collector.h"

#include <grpcpp/grpcpp.h>
#include <prometheus/client_metric.h>
#include <prometheus/metric_type.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/functional/function_ref.h"
#include "server/rejection_reason.h"
#include "server/session.h"

#ifndef SCHEDCACHE_VERSION
#error "SCHEDCACHE_VERSION must be defined (server/CMakeLists.txt)"
#endif

namespace schedcache {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

constexpr double kNanosPerSecond = 1e9;

// kScanCpuBounds: powers of two up to --max_topology_cpus' default, 16384;
// the engine counts CPUs scanned exactly, so every bucket is exact.
constexpr int64_t kScanCpuBounds[] = {
    1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
// The duration buckets are 2^k ns for k in [kScanNsLowestPower,
// kScanNsHighestPower], 64 ns to 8.4 ms: powers of two are bucket bounds of
// the engine's duration histogram, so each count is exact (the scans that
// took less than the bound).
constexpr int kScanNsLowestPower = 6;
constexpr int kScanNsHighestPower = 23;

MetricFamily Family(std::string name, std::string help, MetricType type) {
  MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  return family;
}

// Add appends a sample with `labels` and returns it, for its value.
ClientMetric& Add(MetricFamily& family, Labels labels) {
  ClientMetric& metric = family.metric.emplace_back();
  metric.label = std::move(labels);
  return metric;
}

void AddCounter(MetricFamily& family, Labels labels, uint64_t value) {
  Add(family, std::move(labels)).counter.value = static_cast<double>(value);
}

void AddGauge(MetricFamily& family, Labels labels, double value) {
  Add(family, std::move(labels)).gauge.value = value;
}

// AddHistogram appends one histogram: `count_at(i)` is the cumulative count
// at `bounds[i]`, the last bucket (+Inf) holds all `count`.
void AddHistogram(MetricFamily& family, Labels labels, uint64_t count,
                  double sum, const std::vector<double>& bounds,
                  absl::FunctionRef<uint64_t(size_t)> count_at) {
  ClientMetric::Histogram& histogram = Add(family, std::move(labels)).histogram;
  histogram.sample_count = count;
  histogram.sample_sum = sum;
  for (size_t i = 0; i < bounds.size(); ++i) {
    histogram.bucket.push_back({count_at(i), bounds[i]});
  }
  histogram.bucket.push_back({count, std::numeric_limits<double>::infinity()});
}

// SessionFamilies are the families with a `session` label.
struct SessionFamilies {
  MetricFamily events = Family(
      "schedcache_ingest_events_total",
      "Events ingested into the session, by whether the model applied them.",
      MetricType::Counter);
  MetricFamily rejections = Family(
      "schedcache_ingest_rejections_total",
      "Events rejected, by reason (the field at fault).", MetricType::Counter);
  MetricFamily scans =
      Family("schedcache_scans_total",
             "Scan triggers per policy, by outcome: executed, skipped (the "
             "next_scan gate or a disabled session) or aborted (invalid_nr, "
             "exceeds_capacity).",
             MetricType::Counter);
  MetricFamily kernel_scans = Family(
      "schedcache_kernel_scans_total",
      "The running kernel's scans (kernel decisions with scanned=1) of "
      "processes the session tracks, per policy, by whether the policy's "
      "preferred LLC right after equalled the kernel's.",
      MetricType::Counter);
  MetricFamily scan_cpus =
      Family("schedcache_scan_cpus", "CPUs examined by each executed scan.",
             MetricType::Histogram);
  MetricFamily scan_seconds =
      Family("schedcache_scan_duration_seconds",
             "Wall time of each executed scan; le=2^k ns counts the scans that "
             "took less than 2^k ns.",
             MetricType::Histogram);
  MetricFamily changes = Family(
      "schedcache_preference_changes_total",
      "Changes of a process's preferred LLC, per policy.", MetricType::Counter);
  MetricFamily tracked =
      Family("schedcache_processes_tracked",
             "Processes the session tracks now.", MetricType::Gauge);
  MetricFamily evictions = Family(
      "schedcache_process_evictions_total",
      "Processes evicted, least recently active first, at --max_processes.",
      MetricType::Counter);

  void AddSession(const SessionStats& stats);
  void AddPolicy(const std::string& session,
                 const SessionStats::Policy& policy);
};

void SessionFamilies::AddSession(const SessionStats& stats) {
  const auto labels = [&stats](const char* name, std::string value) {
    return Labels{{"session", stats.name}, {name, std::move(value)}};
  };
  AddCounter(events, labels("result", "accepted"), stats.events_accepted);
  AddCounter(events, labels("result", "rejected"), stats.events_rejected);
  for (int i = 0; i < kRejectionReasonCount; ++i) {
    AddCounter(rejections,
               labels("reason", std::string(RejectionReasonName(
                                    static_cast<RejectionReason>(i)))),
               stats.rejections[i]);
  }
  AddGauge(tracked, {{"session", stats.name}},
           static_cast<double>(stats.processes_tracked));
  AddCounter(evictions, {{"session", stats.name}}, stats.processes_evicted);
  for (const SessionStats::Policy& policy : stats.policies) {
    AddPolicy(stats.name, policy);
  }
}

void SessionFamilies::AddPolicy(const std::string& session,
                                const SessionStats::Policy& policy) {
  const PolicyStats& s = policy.stats;
  const Labels labels = {{"session", session}, {"policy", policy.name}};
  const auto with_outcome = [&labels](const char* outcome) {
    Labels out = labels;
    out.push_back({"outcome", outcome});
    return out;
  };
  AddCounter(scans, with_outcome("executed"), s.scans);
  AddCounter(scans, with_outcome("skipped"), s.scans_skipped);
  AddCounter(scans, with_outcome("aborted"), s.scans_aborted);
  AddCounter(changes, labels, s.preferred_llc_changes);
  const auto with_result = [&labels](const char* result) {
    Labels out = labels;
    out.push_back({"result", result});
    return out;
  };
  AddCounter(kernel_scans, with_result("agree"), s.kernel_agreements);
  AddCounter(kernel_scans, with_result("disagree"),
             s.kernel_scans - s.kernel_agreements);

  static const std::vector<double> cpu_bounds(std::begin(kScanCpuBounds),
                                              std::end(kScanCpuBounds));
  AddHistogram(scan_cpus, labels, s.cpus_scanned.count(), s.cpus_scanned.sum(),
               cpu_bounds, [&s](size_t i) {
                 return s.cpus_scanned.CountAtMost(kScanCpuBounds[i]);
               });
  static const std::vector<double> second_bounds = [] {
    std::vector<double> bounds;
    for (int k = kScanNsLowestPower; k <= kScanNsHighestPower; ++k) {
      bounds.push_back(static_cast<double>(int64_t{1} << k) / kNanosPerSecond);
    }
    return bounds;
  }();
  AddHistogram(
      scan_seconds, labels, s.scan_ns.count(),
      s.scan_ns.sum() / kNanosPerSecond, second_bounds, [&s](size_t i) {
        return s.scan_ns.CountBelow(int64_t{1} << (kScanNsLowestPower + i));
      });
}

}  // namespace

std::vector<MetricFamily> MetricsCollector::Collect() const {
  const std::vector<std::shared_ptr<Session>> sessions = sessions_.List();
  const SchedCacheService::StreamStats streams = service_.Streams();

  MetricFamily build =
      Family("schedcache_build_info",
             "Always 1; the labels say which schedcached and gRPC this is.",
             MetricType::Gauge);
  AddGauge(build, {{"version", SCHEDCACHE_VERSION}, {"grpc", grpc::Version()}},
           1);
  MetricFamily session_count =
      Family("schedcache_sessions", "Sessions alive, default included.",
             MetricType::Gauge);
  AddGauge(session_count, {}, static_cast<double>(sessions.size()));
  MetricFamily open =
      Family("schedcache_streams_open",
             "Streams open now, by kind (ingest, watch, scan_watch).",
             MetricType::Gauge);
  AddGauge(open, {{"kind", "ingest"}}, streams.ingest_open);
  AddGauge(open, {{"kind", "watch"}}, streams.watch_open);
  AddGauge(open, {{"kind", "scan_watch"}}, streams.scan_watch_open);
  MetricFamily dropped = Family(
      "schedcache_watch_dropped_total",
      "Messages dropped because a watcher's queue was full "
      "(--max_watch_queue), by kind: preference changes (the watcher hears "
      "how many in missed_before) and scans (in ScansDropped).",
      MetricType::Counter);
  AddCounter(dropped, {{"kind", "change"}}, streams.watch_changes_dropped);
  AddCounter(dropped, {{"kind", "scan"}}, streams.watch_scans_dropped);

  SessionFamilies per_session;
  for (const std::shared_ptr<Session>& session : sessions) {
    per_session.AddSession(session->Stats());
  }
  std::vector<MetricFamily> families;
  for (MetricFamily* family :
       {&build, &session_count, &open, &dropped, &per_session.events,
        &per_session.rejections, &per_session.scans,
        &per_session.kernel_scans, &per_session.scan_cpus,
        &per_session.scan_seconds, &per_session.changes, &per_session.tracked,
        &per_session.evictions}) {
    families.push_back(std::move(*family));
  }
  return families;
}

}  // namespace schedcache
