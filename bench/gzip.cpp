// bench/gzip.sh's timer: gzip FILE through loopkit's own deflate (sys/gz)
// or through zlib's deflate at level 6, as gzip once called it; prints the
// compressed size and the best of RUNS in MB/s of input.
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "sys/gz.hpp"

namespace {

// not inlined, so that callgrind --toggle-collect='*zlib_gzip*' and
// '*loopkit_gzip*' count each alone
[[gnu::noinline]] std::string zlib_gzip(const std::string& in) {
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, static_cast<uLong>(in.size())) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::fprintf(stderr, "gzip bench: zlib failed\n");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

[[gnu::noinline]] std::string loopkit_gzip(const std::string& in) { return loopkit::gzip(in); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: gzip-bench loopkit|zlib FILE RUNS\n");
    return 2;
  }
  std::string which = argv[1];
  std::ifstream f(argv[2], std::ios::binary);
  std::string in((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::size_t size = 0;
  double best = 1e9;
  for (int i = 0; i < std::stoi(argv[3]); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    std::string out = which == "zlib" ? zlib_gzip(in) : loopkit_gzip(in);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (loopkit::gunzip(out, argv[2]) != in)
      std::fprintf(stderr, "gzip bench: %s's output reads back wrong\n", argv[1]);
    size = out.size();
    best = std::min(best, s);
  }
  std::printf("%zu %.1f\n", size, in.size() / best / 1e6);
}
