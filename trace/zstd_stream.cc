#include "trace/zstd_stream.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace schedcache {
namespace {

ZSTD_DStream* AsD(void* stream) { return static_cast<ZSTD_DStream*>(stream); }
ZSTD_CStream* AsC(void* stream) { return static_cast<ZSTD_CStream*>(stream); }

}  // namespace

bool StartsZstdFrame(std::string_view bytes) {
  constexpr std::string_view kMagic("\x28\xb5\x2f\xfd", 4);
  return bytes.substr(0, kMagic.size()) == kMagic;
}

void ZstdDecoder::Free::operator()(void* stream) const {
  ZSTD_freeDStream(AsD(stream));
}

ZstdDecoder::ZstdDecoder(std::string_view first_bytes)
    : stream_(ZSTD_createDStream()) {
  input_.resize(std::max(ZSTD_DStreamInSize(), first_bytes.size()));
  std::memcpy(input_.data(), first_bytes.data(), first_bytes.size());
  input_end_ = first_bytes.size();
}

ZstdDecoder::~ZstdDecoder() = default;

absl::StatusOr<size_t> ZstdDecoder::Decode(ReadCompressed read, char* out,
                                           size_t want) {
  if (stream_ == nullptr) {
    return absl::ResourceExhaustedError("zstd: out of memory");
  }
  ZSTD_outBuffer output{out, want, 0};
  while (output.pos == 0) {
    if (input_pos_ == input_end_) {
      absl::StatusOr<size_t> got = read(input_.data(), input_.size());
      if (!got.ok()) return got.status();
      input_pos_ = 0;
      input_end_ = *got;
      if (*got == 0) {
        if (frame_complete_) return 0;
        return absl::DataLossError(
            "is truncated: its zstd stream ends inside a frame");
      }
    }
    ZSTD_inBuffer input{input_.data(), input_end_, input_pos_};
    const size_t hint = ZSTD_decompressStream(AsD(stream_.get()), &output,
                                              &input);
    input_pos_ = input.pos;
    if (ZSTD_isError(hint)) {
      return absl::DataLossError(
          absl::StrCat("holds corrupt zstd data (", ZSTD_getErrorName(hint), ")"));
    }
    frame_complete_ = hint == 0;
  }
  return output.pos;
}

void ZstdEncoder::Free::operator()(void* stream) const {
  ZSTD_freeCStream(AsC(stream));
}

ZstdEncoder::ZstdEncoder() : stream_(ZSTD_createCStream()) {
  if (stream_ != nullptr) {
    ZSTD_CCtx_setParameter(AsC(stream_.get()), ZSTD_c_compressionLevel,
                           kLevel);
  }
}

ZstdEncoder::~ZstdEncoder() = default;

absl::Status ZstdEncoder::Compress(std::string_view text, std::string& out) {
  return Run(text, ZSTD_e_continue, out);
}

absl::Status ZstdEncoder::Finish(std::string& out) {
  return Run(std::string_view(), ZSTD_e_end, out);
}

absl::Status ZstdEncoder::Run(std::string_view text, int end_op,
                              std::string& out) {
  if (stream_ == nullptr) return absl::InternalError("zstd: out of memory");
  ZSTD_inBuffer input{text.data(), text.size(), 0};
  const size_t chunk = ZSTD_CStreamOutSize();
  while (true) {
    const size_t before = out.size();
    out.resize(before + chunk);
    ZSTD_outBuffer output{out.data() + before, chunk, 0};
    const size_t left =
        ZSTD_compressStream2(AsC(stream_.get()), &output, &input,
                             static_cast<ZSTD_EndDirective>(end_op));
    out.resize(before + output.pos);
    if (ZSTD_isError(left)) {
      return absl::InternalError(
          absl::StrCat("zstd: ", ZSTD_getErrorName(left)));
    }
    // Continuing, done once the input is taken; ending, once nothing is
    // left to flush.
    const bool done = end_op == ZSTD_e_end ? left == 0
                                           : input.pos == input.size;
    if (done) return absl::OkStatus();
  }
}

}  // namespace schedcache
