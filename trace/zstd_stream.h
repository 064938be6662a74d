// Zstandard (RFC 8878) streaming for trace files, through Debian's libzstd:
// ZstdDecoder turns a compressed byte stream into text for LineReader, and
// ZstdEncoder compresses FtraceWriter's lines. Neither touches a file: the
// caller moves the bytes (both go through the same zlib gzFile that reads
// and writes plain text, in its transparent mode), so the file handling,
// FIFOs and error naming stay in one place.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_TRACE_ZSTD_STREAM_H_
#define SCHEDCACHE_TRACE_ZSTD_STREAM_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace schedcache {

// StartsZstdFrame: whether `bytes` begins with the zstd frame magic
// 28 b5 2f fd (a skippable frame's magic is not taken: `zstd` never writes
// one first).
bool StartsZstdFrame(std::string_view bytes);

class ZstdDecoder {
 public:
  // ReadCompressed fills up to `capacity` bytes of compressed input;
  // 0 at its end.
  using ReadCompressed =
      absl::FunctionRef<absl::StatusOr<size_t>(char* out, size_t capacity)>;

  // `first_bytes`: compressed input the caller read already (the magic).
  explicit ZstdDecoder(std::string_view first_bytes);
  ZstdDecoder(const ZstdDecoder&) = delete;
  ZstdDecoder& operator=(const ZstdDecoder&) = delete;
  ~ZstdDecoder();

  // Decode writes up to `want` bytes of text to `out` and returns how many;
  // 0 only at the end of the input after a complete frame. Several frames
  // one after another decode as one text, as `zstd -d` does. DataLoss
  // "is truncated: its zstd stream ends inside a frame" when the input
  // stops before its frame does, "holds corrupt zstd data (WHY)" when
  // libzstd refuses it, each to follow the file's name; a read error is
  // returned as `read` gave it.
  absl::StatusOr<size_t> Decode(ReadCompressed read, char* out, size_t want);

 private:
  struct Free {
    void operator()(void* stream) const;
  };
  std::unique_ptr<void, Free> stream_;  // ZSTD_DStream
  std::string input_;                   // compressed bytes read
  size_t input_pos_ = 0;                // consumed of input_
  size_t input_end_ = 0;                // valid bytes in input_
  bool frame_complete_ = true;          // libzstd's last hint was 0
};

class ZstdEncoder {
 public:
  // kLevel: zstd's own default level (3); it compresses trace text about
  // as well as gzip -6 at several times its speed.
  static constexpr int kLevel = 3;

  ZstdEncoder();
  ZstdEncoder(const ZstdEncoder&) = delete;
  ZstdEncoder& operator=(const ZstdEncoder&) = delete;
  ~ZstdEncoder();

  // Compress appends to `out` what compressing `text` gives so far (maybe
  // nothing: libzstd keeps a block until it is full). Finish appends the
  // rest and the end of the frame; call it once, last. Both fail only when
  // libzstd does (out of memory), with Internal naming its error.
  absl::Status Compress(std::string_view text, std::string& out);
  absl::Status Finish(std::string& out);

 private:
  struct Free {
    void operator()(void* stream) const;
  };
  // Run drives the stream over `text` with `end_op` (a ZSTD_EndDirective)
  // until libzstd has taken it all, or, finishing, has flushed the frame.
  absl::Status Run(std::string_view text, int end_op, std::string& out);
  std::unique_ptr<void, Free> stream_;  // ZSTD_CStream
};

}  // namespace schedcache

#endif  // SCHEDCACHE_TRACE_ZSTD_STREAM_H_
