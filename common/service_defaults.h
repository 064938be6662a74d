// Defaults that the server and its clients must agree on without talking.
#ifndef SCHEDCACHE_COMMON_SERVICE_DEFAULTS_H_
#define SCHEDCACHE_COMMON_SERVICE_DEFAULTS_H_

namespace schedcache {

// kDefaultServerAddress is where schedcached listens and clients connect
// when neither is told otherwise: a Unix socket, so the service is private
// to the machine (mode 0600) unless TCP is asked for.
inline constexpr char kDefaultServerAddress[] =
    "unix:/run/schedcache/schedcached.sock";

// kDefaultSessionName is the session that exists from the server's start.
inline constexpr char kDefaultSessionName[] = "default";

// kDefaultPolicies are the policies of the `default` session and of a
// session created without --policies, comma-separated; the first is the
// reference.
inline constexpr char kDefaultPolicies[] = "full-scan,visited-scan,none";

// kWatchAttachedMetadata is the initial-metadata key schedcached sends on
// WatchPreferences once the stream is attached to its session, so a client
// tells an attached watch from a refused one before any change arrives.
inline constexpr char kWatchAttachedMetadata[] = "schedcache-watch-attached";

// kIngestSummaryTrailer is the trailing-metadata key (binary: a serialised
// schedcache.v1.IngestSummary) of an Ingest stream that ends with an error,
// e.g. UNAVAILABLE when the server stops: a failed call has no response
// message, and the client must still learn exactly what was applied.
inline constexpr char kIngestSummaryTrailer[] = "schedcache-ingest-summary-bin";

}  // namespace schedcache

#endif  // SCHEDCACHE_COMMON_SERVICE_DEFAULTS_H_
