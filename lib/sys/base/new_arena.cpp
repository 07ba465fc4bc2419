// operator new and delete for the tools: small blocks from a fixed arena,
// the rest from malloc. A tool's call makes a few dozen small allocations
// and exits; each of malloc's first ones carves its block from the top of a
// fresh heap (~170 instructions, ~80 more to free it), a fifth of a small
// state-set. From the arena a block costs a few instructions and freeing it
// nothing. The arena is never reused: a process that runs long (a follower,
// a waiter, --stream) fills it in its first few thousand allocations and
// goes on with malloc, having kept at most its size.
//
// Linked into each tool (CMakeLists.txt), not into libloopkit.a: the
// definitions must replace libstdc++'s in the tools alone, and are left out
// of the sanitizer builds, whose own operator new finds the heap errors.
// The tools have one thread.
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {
constexpr std::size_t arena_bytes = 256 * 1024;
// larger blocks (a file's text, a vector grown large) go to malloc: the
// arena is for the many small ones
constexpr std::size_t largest_block = 4096;
alignas(__STDCPP_DEFAULT_NEW_ALIGNMENT__) unsigned char arena[arena_bytes];
std::size_t arena_used = 0;

bool in_arena(const void* p) {
  const auto* b = static_cast<const unsigned char*>(p);
  return b >= arena && b < arena + arena_bytes;
}

void* from_malloc(std::size_t n) {
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t n) {
  constexpr std::size_t align = __STDCPP_DEFAULT_NEW_ALIGNMENT__;
  if (n <= largest_block) {
    // a block of 0 bytes takes space too: each new returns a pointer of its own
    const std::size_t size = n ? (n + align - 1) & ~(align - 1) : align;
    if (size <= arena_bytes - arena_used) {
      void* p = arena + arena_used;
      arena_used += size;
      return p;
    }
  }
  return from_malloc(n);
}

void operator delete(void* p) noexcept {
  if (!in_arena(p)) std::free(p);
}

void operator delete(void* p, std::size_t) noexcept { ::operator delete(p); }

// Every other form too, so that none is left to a libstdc++ whose own
// forwarding (or not, in a shared one) would pair our block with free
void* operator new[](std::size_t n) { return ::operator new(n); }
void operator delete[](void* p) noexcept { ::operator delete(p); }
void operator delete[](void* p, std::size_t) noexcept { ::operator delete(p); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return ::operator new(n, std::nothrow); }
void operator delete(void* p, const std::nothrow_t&) noexcept { ::operator delete(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { ::operator delete(p); }
