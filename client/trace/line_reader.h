// LineReader streams the lines of a file that is plain text or gzip (zlib
// detects gzip by its magic bytes, never by the file name), reading it in
// fixed chunks into one reused buffer: memory is bounded by the chunk size
// and the longest line, not by the file's length.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_CLIENT_TRACE_LINE_READER_H_
#define SCHEDCACHE_CLIENT_TRACE_LINE_READER_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace schedcache {

class LineReader {
 public:
  // Open opens `path` ("-": standard input). Returns NotFound or
  // PermissionDenied (naming the path) when it cannot be opened.
  static absl::StatusOr<LineReader> Open(absl::string_view path);

  LineReader(LineReader&&) noexcept;
  LineReader& operator=(LineReader&&) noexcept;
  ~LineReader();

  // NextLine returns the next line without its '\n' (a last line without a
  // newline counts), or nullopt at the end of the file. The view stays
  // valid until the next call. Returns DataLoss on a read or gzip error.
  absl::StatusOr<std::optional<std::string_view>> NextLine();

 private:
  struct GzCloser {
    void operator()(void* file) const;
  };
  LineReader(std::string path, void* file);
  absl::Status Fill();

  std::string path_;
  std::unique_ptr<void, GzCloser> file_;  // a zlib gzFile
  std::string buffer_;
  size_t begin_ = 0;  // start of the unread text in buffer_
  size_t end_ = 0;    // end of the valid text in buffer_
  bool eof_ = false;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_CLIENT_TRACE_LINE_READER_H_
