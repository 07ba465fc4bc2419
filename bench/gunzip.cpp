// bench/gunzip.sh's timer: gunzip FILE.gz through loopkit's own inflate
// (sys/gz) or through zlib's inflate, the best of runs, in MB/s of output.
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "sys/gz.hpp"

namespace {

// zlib's inflate as gunzip once used it: one call, the whole output at once (not
// inlined, so that callgrind --toggle-collect='*zlib_gunzip*' counts it alone)
[[gnu::noinline]] std::string zlib_gunzip(const std::string& in, std::size_t size) {
  z_stream z{};
  std::string out(size, '\0');
  inflateInit2(&z, 15 + 16);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (inflate(&z, Z_FINISH) != Z_STREAM_END) std::fprintf(stderr, "gunzip bench: zlib failed\n");
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: gunzip-bench loopkit|zlib FILE.gz RUNS\n");
    return 2;
  }
  std::string which = argv[1];
  std::ifstream f(argv[2], std::ios::binary);
  std::string in((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::size_t size = loopkit::gunzip(in, argv[2]).size();
  double best = 1e9;
  for (int i = 0; i < std::stoi(argv[3]); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    std::size_t got = which == "zlib" ? zlib_gunzip(in, size).size() : loopkit::gunzip(in, argv[2]).size();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (got != size) std::fprintf(stderr, "gunzip bench: %zu bytes, not %zu\n", got, size);
    best = std::min(best, s);
  }
  std::printf("%s: %zu bytes in %.1f ms, %.0f MB/s\n", which.c_str(), size, best * 1e3, size / best / 1e6);
}
