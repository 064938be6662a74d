// LineReader streams the lines of a file that is plain text, gzip or
// Zstandard, told by the magic bytes, never by the file name (zlib detects
// gzip; a file zlib reads as plain that starts with the zstd magic is
// decompressed by trace/zstd_stream.h), reading it in fixed chunks into one
// fixed buffer: memory is bounded by the chunk size and the line limit,
// never by the file's length.
//
// What it refuses, so that no input can hang it or grow it without bound:
//  - a directory (InvalidArgument, up front);
//  - a line longer than kMaxLineBytes (OutOfRange: /dev/zero, binary data);
//  - gzip data that ends before its trailer or does not decompress
//    (DataLoss, naming how far it got: zlib's gzread alone returns a
//    truncated stream as a clean end of file); zstd data that ends inside
//    a frame or does not decompress, the same way.
// A FIFO is opened without waiting for a writer; one with no writer at that
// moment reads as empty input, so a forgotten `mkfifo` never hangs a run.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_TRACE_LINE_READER_H_
#define SCHEDCACHE_TRACE_LINE_READER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "trace/zstd_stream.h"

namespace schedcache {

class LineReader {
 public:
  // kMaxLineBytes is the longest line accepted, without its '\n' (1 MiB).
  // Trace and CSV lines are a few hundred bytes; a longer one means the
  // input is not text of lines at all.
  static constexpr size_t kMaxLineBytes = size_t{1} << 20;

  // Open opens `path` ("-": standard input). Returns the error of open(2)
  // as a status naming the path (NotFound, PermissionDenied, ...) when it
  // cannot be opened, and InvalidArgument for a directory.
  static absl::StatusOr<LineReader> Open(absl::string_view path);

  // FromText reads `text` (not owned; must outlive the reader) exactly as
  // Open would read a plain file holding it; `name` stands for its path in
  // messages.
  static LineReader FromText(std::string_view text, std::string name);

  LineReader(LineReader&&) noexcept;
  LineReader& operator=(LineReader&&) noexcept;
  ~LineReader();

  // NextLine returns the next line without its '\n' (a last line without a
  // newline counts), or nullopt at the end of the input. The view stays
  // valid until the next call. Returns OutOfRange (naming the line number
  // and its length) for a line longer than kMaxLineBytes, and DataLoss
  // (naming the file and how far it got, in bytes of text and lines) for a
  // truncated or corrupt gzip or zstd stream or a read error. After an error the
  // reader is done: every later call returns the same error.
  absl::StatusOr<std::optional<std::string_view>> NextLine();

  // line_number is the number of the last line NextLine returned (1-based;
  // 0 before the first).
  int64_t line_number() const { return line_number_; }
  // path is the path given to Open, or FromText's name.
  const std::string& path() const { return path_; }

 private:
  struct GzCloser {
    void operator()(void* file) const;
  };
  LineReader(std::string path, void* file, std::string_view text);
  // Fill moves the unread text to the front and reads more after it.
  absl::Status Fill();
  // Read copies up to `want` bytes of the input's text to `out`; 0 at the
  // end. The first read of a file looks at its magic (Sniff).
  absl::StatusOr<size_t> Read(char* out, size_t want);
  // ReadFile reads up to `want` bytes through zlib: gzip decompressed,
  // anything else as it is.
  absl::StatusOr<size_t> ReadFile(char* out, size_t want);
  // Sniff reads the file's first bytes: a zstd frame magic, where zlib
  // found no gzip, starts the zstd decoder; other bytes are text kept in
  // sniffed_.
  absl::Status Sniff();
  absl::Status TooLong(size_t bytes, bool complete) const;
  // Progress says how far the reading got, for messages.
  std::string Progress() const;

  std::string path_;
  std::unique_ptr<void, GzCloser> file_;  // a zlib gzFile; null for text
  std::string_view text_;                 // FromText's unread input
  bool sniffed_ = false;                  // Sniff has run
  std::string sniffed_text_;              // text Sniff read, not yet returned
  std::unique_ptr<ZstdDecoder> zstd_;     // set for a zstd file
  std::string buffer_;
  size_t begin_ = 0;  // start of the unread text in buffer_
  size_t end_ = 0;    // end of the valid text in buffer_
  bool eof_ = false;
  int64_t line_number_ = 0;
  uint64_t bytes_read_ = 0;  // uncompressed bytes read so far
  absl::Status error_;       // sticky: the first error
};

}  // namespace schedcache

#endif  // SCHEDCACHE_TRACE_LINE_READER_H_
