// The timer of bench/gzip.sh and bench/gunzip.sh:
//   gz-bench gzip loopkit|zlib FILE RUNS     compressed size and MB/s of input
//   gz-bench gunzip loopkit|zlib FILE.gz RUNS  MB/s of output
// through loopkit's own deflate and inflate (sys/gz) or through zlib's, as
// gzip once called them (level 6; the whole output at once); the best of
// RUNS. The four calls are not inlined, so that callgrind
// --toggle-collect='*zlib_gzip*' (or loopkit_gzip, zlib_gunzip,
// loopkit_gunzip) counts each alone.
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "sys/gz/gz.hpp"

namespace {

// z's input and output set to in and out
void point(z_stream& z, const std::string& in, std::string& out) {
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
}

[[gnu::noinline]] std::string zlib_gzip(const std::string& in) {
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, static_cast<uLong>(in.size())) + 32, '\0');
  point(z, in, out);
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::fprintf(stderr, "gz-bench: zlib's deflate failed\n");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

[[gnu::noinline]] std::string zlib_gunzip(const std::string& in, std::size_t size) {
  z_stream z{};
  std::string out(size, '\0');
  inflateInit2(&z, 15 + 16);
  point(z, in, out);
  if (inflate(&z, Z_FINISH) != Z_STREAM_END) std::fprintf(stderr, "gz-bench: zlib's inflate failed\n");
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

[[gnu::noinline]] std::string loopkit_gzip(const std::string& in) { return loopkit::gzip(in); }
[[gnu::noinline]] std::string loopkit_gunzip(const std::string& in) { return loopkit::gunzip(in, "input"); }

// the best of runs of f, in seconds
template <class F>
double best_of(int runs, F f) {
  double best = 1e9;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string how = argc == 5 ? argv[1] : "", which = argc == 5 ? argv[2] : "";
  if ((how != "gzip" && how != "gunzip") || (which != "loopkit" && which != "zlib")) {
    std::fprintf(stderr, "usage: gz-bench gzip|gunzip loopkit|zlib FILE RUNS\n");
    return 2;
  }
  std::ifstream f(argv[3], std::ios::binary);
  const std::string in((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const int runs = std::stoi(argv[4]);
  if (how == "gzip") {
    std::string out;
    const double s = best_of(runs, [&] { out = which == "zlib" ? zlib_gzip(in) : loopkit_gzip(in); });
    if (loopkit::gunzip(out, argv[3]) != in) std::fprintf(stderr, "gz-bench: %s's output reads back wrong\n", argv[2]);
    std::printf("%zu %.1f\n", out.size(), in.size() / s / 1e6);
    return 0;
  }
  const std::size_t size = loopkit::gunzip(in, argv[3]).size();
  std::size_t got = 0;
  const double s = best_of(runs, [&] { got = (which == "zlib" ? zlib_gunzip(in, size) : loopkit_gunzip(in)).size(); });
  if (got != size) std::fprintf(stderr, "gz-bench: %zu bytes, not %zu\n", got, size);
  std::printf("%s: %zu bytes in %.1f ms, %.0f MB/s\n", which.c_str(), size, s * 1e3, size / s / 1e6);
}
