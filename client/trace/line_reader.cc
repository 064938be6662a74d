#include "client/trace/line_reader.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace schedcache {
namespace {

constexpr size_t kChunkBytes = 1 << 20;

gzFile AsGz(void* file) { return static_cast<gzFile>(file); }

}  // namespace

void LineReader::GzCloser::operator()(void* file) const {
  gzclose(AsGz(file));
}

absl::StatusOr<LineReader> LineReader::Open(absl::string_view path) {
  errno = 0;
  gzFile file = nullptr;
  if (path == "-") {
    const int fd = dup(STDIN_FILENO);
    if (fd >= 0) file = gzdopen(fd, "rb");
    if (file == nullptr && fd >= 0) close(fd);
  } else {
    file = gzopen(std::string(path).c_str(), "rb");
  }
  if (file == nullptr) {
    const int err = errno;
    const std::string message = absl::StrCat(
        "cannot open trace '", path, "': ",
        err != 0 ? std::strerror(err) : "out of memory");
    if (err == EACCES) return absl::PermissionDeniedError(message);
    return absl::NotFoundError(message);
  }
  gzbuffer(file, 256 * 1024);
  return LineReader(std::string(path), file);
}

LineReader::LineReader(std::string path, void* file)
    : path_(std::move(path)), file_(file) {
  buffer_.resize(kChunkBytes);
}

LineReader::LineReader(LineReader&&) noexcept = default;
LineReader& LineReader::operator=(LineReader&&) noexcept = default;
LineReader::~LineReader() = default;

absl::Status LineReader::Fill() {
  // Keep the unfinished line, moved to the front; grow only for a line
  // longer than the buffer.
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
  const unsigned want = static_cast<unsigned>(
      std::min<size_t>(buffer_.size() - end_, 1u << 30));
  const int got = gzread(AsGz(file_.get()), buffer_.data() + end_, want);
  if (got < 0) {
    int code = 0;
    const char* message = gzerror(AsGz(file_.get()), &code);
    return absl::DataLossError(
        absl::StrCat("reading trace '", path_, "': ", message));
  }
  if (got == 0) eof_ = true;
  end_ += static_cast<size_t>(got);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string_view>> LineReader::NextLine() {
  size_t scanned = begin_;
  while (true) {
    const void* nl = std::memchr(buffer_.data() + scanned, '\n', end_ - scanned);
    if (nl != nullptr) {
      const size_t at = static_cast<const char*>(nl) - buffer_.data();
      std::string_view line(buffer_.data() + begin_, at - begin_);
      begin_ = at + 1;
      return std::optional<std::string_view>(line);
    }
    if (eof_) {
      if (begin_ == end_) return std::optional<std::string_view>();
      std::string_view line(buffer_.data() + begin_, end_ - begin_);
      begin_ = end_;
      return std::optional<std::string_view>(line);
    }
    scanned = end_ - begin_;  // Fill moves the unread text to the front
    if (absl::Status s = Fill(); !s.ok()) return s;
  }
}

}  // namespace schedcache
