// StateDir: the session definitions schedcached keeps across restarts
// (--state_dir). Each named session is one file, `<name>.session`, holding
// the CreateSessionRequest that created it (binary protobuf: name, topology
// source with any XML bytes, policies, tunables, trigger). Model state is not
// kept: a restored session starts empty.
//
// Writes are atomic: the bytes go to a temporary file beside the final one,
// which is fsynced, renamed over the final name, and the directory fsynced,
// so after a crash a file holds either the old definition or the new one;
// an interrupted write leaves only a `<name>.session.tmp.XXXXXX` file,
// which Load removes and reports.
//
// Thread contract: thread-compatible. SessionManager serialises Save and
// Remove; Load runs at start, before anything else uses the directory.
#ifndef SCHEDCACHE_SERVER_STATE_DIR_H_
#define SCHEDCACHE_SERVER_STATE_DIR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "schedcache/v1/schedcache.pb.h"

namespace schedcache {

class StateDir {
 public:
  // StoredDefinition is one file Load found: its path, and the definition
  // or why it cannot be used (a message that names the file).
  struct StoredDefinition {
    std::string file;
    absl::StatusOr<v1::CreateSessionRequest> definition;
  };

  // Open uses `path` as the state directory, creating it (mode 0700) when
  // it does not exist; its parent must. Errors, naming the path:
  // InvalidArgument when empty or not a directory, FailedPrecondition when
  // it cannot be created or a file cannot be written in it (checked by
  // creating and removing one).
  static absl::StatusOr<std::unique_ptr<StateDir>> Open(std::string path);

  const std::string& path() const { return path_; }

  // Save writes `definition` atomically as the file of its name, replacing
  // an older one. On error (Internal, naming the file and the failing
  // call) no file of the name changed and no temporary file is left.
  absl::Status Save(const v1::CreateSessionRequest& definition) const;

  // Remove deletes the file of session `name`; OK when there is none.
  // Internal, naming the file, when it cannot be removed.
  absl::Status Remove(absl::string_view name) const;

  // Load reads every `*.session` file, in file name order. A file that
  // cannot be read, does not parse, or holds another session's name comes
  // back with an error instead of a definition; a temporary file of an
  // interrupted write is removed and comes back as an error too.
  std::vector<StoredDefinition> Load() const;

 private:
  explicit StateDir(std::string path) : path_(std::move(path)) {}

  // FileOf is the path of session `name`'s file.
  std::string FileOf(absl::string_view name) const;
  // SyncDirectory makes the directory's entries (a rename, an unlink)
  // durable.
  absl::Status SyncDirectory() const;

  const std::string path_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_STATE_DIR_H_
