#include "trace/line_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace schedcache {
namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;
// The buffer holds an unfinished line of up to the limit plus one chunk, so
// it never grows.
constexpr size_t kBufferBytes = LineReader::kMaxLineBytes + kChunkBytes;

gzFile AsGz(void* file) { return static_cast<gzFile>(file); }

// OpenFd opens `path` without blocking on a FIFO that has no writer.
absl::StatusOr<int> OpenFd(absl::string_view path) {
  if (path == "-") {
    const int fd = dup(STDIN_FILENO);
    if (fd < 0) return absl::ErrnoToStatus(errno, "cannot read standard input");
    return fd;
  }
  const int fd =
      open(std::string(path).c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot open '", path, "'"));
  }
  // Reads block again from here on: a FIFO that had a writer waits for its
  // data; one without reads as empty (read() returns 0 with no writer).
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
    const int err = errno;
    close(fd);
    return absl::ErrnoToStatus(err, absl::StrCat("cannot read '", path, "'"));
  }
  return fd;
}

// CheckNotDirectory refuses a directory up front: open() accepts one, and
// reading it would fail later with an obscure error.
absl::Status CheckNotDirectory(int fd, absl::string_view path) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot stat '", path, "'"));
  }
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is a directory, not a file"));
  }
  return absl::OkStatus();
}

}  // namespace

void LineReader::GzCloser::operator()(void* file) const { gzclose(AsGz(file)); }

absl::StatusOr<LineReader> LineReader::Open(absl::string_view path) {
  absl::StatusOr<int> fd = OpenFd(path);
  if (!fd.ok()) return fd.status();
  if (absl::Status kind = CheckNotDirectory(*fd, path); !kind.ok()) {
    close(*fd);
    return kind;
  }
  gzFile file = gzdopen(*fd, "rb");
  if (file == nullptr) {
    close(*fd);
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot read '", path, "': out of memory"));
  }
  gzbuffer(file, 256 * 1024);
  return LineReader(std::string(path), file, std::string_view());
}

LineReader LineReader::FromText(std::string_view text, std::string name) {
  return LineReader(std::move(name), nullptr, text);
}

LineReader::LineReader(std::string path, void* file, std::string_view text)
    : path_(std::move(path)), file_(file), text_(text) {
  buffer_.resize(kBufferBytes);
}

LineReader::LineReader(LineReader&&) noexcept = default;
LineReader& LineReader::operator=(LineReader&&) noexcept = default;
LineReader::~LineReader() = default;

absl::StatusOr<size_t> LineReader::Read(char* out, size_t want) {
  if (file_ == nullptr) {
    const size_t n = std::min(want, text_.size());
    std::memcpy(out, text_.data(), n);
    text_.remove_prefix(n);
    return n;
  }
  if (!sniffed_) {
    if (absl::Status s = Sniff(); !s.ok()) return s;
  }
  if (!sniffed_text_.empty()) {
    const size_t n = std::min(want, sniffed_text_.size());
    std::memcpy(out, sniffed_text_.data(), n);
    sniffed_text_.erase(0, n);
    return n;
  }
  if (zstd_ == nullptr) return ReadFile(out, want);
  bool read_failed = false;  // ReadFile's errors name the file already
  absl::StatusOr<size_t> got = zstd_->Decode(
      [this, &read_failed](char* compressed, size_t capacity) {
        absl::StatusOr<size_t> read = ReadFile(compressed, capacity);
        read_failed = !read.ok();
        return read;
      },
      out, want);
  if (got.ok() || read_failed) return got;
  return absl::DataLossError(absl::StrCat(
      "'", path_, "' ", got.status().message(), ", after ", Progress()));
}

absl::Status LineReader::Sniff() {
  sniffed_ = true;
  char head[4];
  absl::StatusOr<size_t> got = ReadFile(head, sizeof(head));
  if (!got.ok()) return got.status();
  const std::string_view bytes(head, *got);
  if (gzdirect(AsGz(file_.get())) == 1 && StartsZstdFrame(bytes)) {
    zstd_ = std::make_unique<ZstdDecoder>(bytes);
  } else {
    sniffed_text_.assign(bytes);
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> LineReader::ReadFile(char* out, size_t want) {
  gzFile file = AsGz(file_.get());
  const int got = gzread(file, out, static_cast<unsigned>(want));
  int code = Z_OK;
  absl::string_view message = gzerror(file, &code);
  // zlib prefixes the name gzdopen gave the file, "<fd:3>: ".
  if (absl::StartsWith(message, "<fd:")) {
    message.remove_prefix(std::min(message.size(), message.find(": ") + 2));
  }
  if (got < 0) {
    return absl::DataLossError(absl::StrCat(
        code == Z_DATA_ERROR ? "corrupt gzip data in '" : "reading '", path_,
        "' after ", Progress(), ": ", message));
  }
  // zlib ends a gzip stream that stops before its trailer like a complete
  // one, and says so only through the error state (Z_BUF_ERROR).
  if (got == 0 && code == Z_BUF_ERROR) {
    return absl::DataLossError(
        absl::StrCat("'", path_, "' is truncated: its gzip stream ends after ",
                     Progress(), ", before the gzip trailer"));
  }
  return static_cast<size_t>(got);
}

std::string LineReader::Progress() const {
  return absl::StrCat(bytes_read_, " bytes of text (in line ", line_number_ + 1,
                      ")");
}

absl::Status LineReader::Fill() {
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  // The unfinished line is at most kMaxLineBytes, so a chunk fits after it.
  absl::StatusOr<size_t> got = Read(buffer_.data() + end_, kChunkBytes);
  if (!got.ok()) return got.status();
  if (*got == 0) eof_ = true;
  end_ += *got;
  bytes_read_ += *got;
  return absl::OkStatus();
}

absl::Status LineReader::TooLong(size_t bytes, bool complete) const {
  return absl::OutOfRangeError(
      absl::StrCat("'", path_, "' line ", line_number_ + 1, " has ",
                   complete ? "" : "at least ", bytes,
                   complete ? " bytes" : " bytes without a newline",
                   ", over the line limit of ", kMaxLineBytes,
                   " bytes: this is not a text file of trace or CSV lines"));
}

absl::StatusOr<std::optional<std::string_view>> LineReader::NextLine() {
  if (!error_.ok()) return error_;
  size_t scanned = begin_;
  while (true) {
    const void* nl =
        std::memchr(buffer_.data() + scanned, '\n', end_ - scanned);
    const size_t line_end =
        nl != nullptr ? static_cast<const char*>(nl) - buffer_.data() : end_;
    if (line_end - begin_ > kMaxLineBytes) {
      error_ = TooLong(line_end - begin_, nl != nullptr);
      return error_;
    }
    if (nl != nullptr || (eof_ && begin_ < end_)) {
      std::string_view line(buffer_.data() + begin_, line_end - begin_);
      begin_ = nl != nullptr ? line_end + 1 : end_;
      ++line_number_;
      return std::optional<std::string_view>(line);
    }
    if (eof_) return std::optional<std::string_view>();
    scanned = end_ - begin_;  // Fill moves the unread text to the front
    if (absl::Status s = Fill(); !s.ok()) {
      error_ = s;
      return error_;
    }
  }
}

}  // namespace schedcache
