// Buffers (spec/memory_objects.md): buffers made from host data, host
// accessors, handler::copy both ways and between accessors, handler::fill,
// update_host, sub-buffers, and the write-back to host memory when a buffer
// made over it goes. Commands only (no kernels). Every backend serves
// buffers, and none serves images: no device has the image aspect.
#include "check.hpp"

#include <numeric>
#include <vector>

int main() {
  sycl::queue q{sycl::default_selector_v, sycl::property::queue::in_order{}};
  constexpr size_t n = 1 << 16;

  section("no images", [&] {
    // No adapter serves images: each says so, so that libsycl never tries.
    check(!q.get_device().has(sycl::aspect::image), "the device has no image aspect");
  });

  section("buffer from host data, host accessor", [&] {
    std::vector<int> src(n);
    std::iota(src.begin(), src.end(), 0);
    sycl::buffer<int> b{src.data(), sycl::range<1>{n}};
    sycl::host_accessor a{b, sycl::read_only};
    bool same = true;
    for (size_t i = 0; i < n; ++i) same = same && a[i] == int(i);
    check(same, "a host accessor reads the data the buffer was made from");
  });

  section("copy in, fill, copy out", [&] {
    std::vector<int> src(n), out(n, -1);
    for (size_t i = 0; i < n; ++i) src[i] = int(i * 7);
    sycl::buffer<int> b{sycl::range<1>{n}};
    q.submit([&](sycl::handler &h) { h.copy(src.data(), sycl::accessor{b, h, sycl::write_only}); });
    q.submit([&](sycl::handler &h) {
      sycl::accessor a{b, h, sycl::range<1>{100}, sycl::id<1>{1000}, sycl::write_only};
      h.fill(a, -5);
    });
    q.submit([&](sycl::handler &h) { h.copy(sycl::accessor{b, h, sycl::read_only}, out.data()); }).wait();
    bool same = true;
    for (size_t i = 0; i < n; ++i) same = same && out[i] == ((i >= 1000 && i < 1100) ? -5 : int(i * 7));
    check(same, "what was copied in, then filled over a range, comes back out");
  });

  section("copy between buffers", [&] {
    std::vector<int> src(n, 3);
    sycl::buffer<int> a{src.data(), sycl::range<1>{n}};
    sycl::buffer<int> b{sycl::range<1>{n}};
    q.submit([&](sycl::handler &h) { h.copy(sycl::accessor{a, h, sycl::read_only}, sycl::accessor{b, h, sycl::write_only}); });
    sycl::host_accessor r{b, sycl::read_only};
    bool same = true;
    for (size_t i = 0; i < n; ++i) same = same && r[i] == 3;
    check(same, "an accessor-to-accessor copy fills the destination");
  });

  section("sub-buffer", [&] {
    std::vector<int> host(n, 0);
    sycl::buffer<int> parent{sycl::range<1>{n}};
    q.submit([&](sycl::handler &h) { h.fill(sycl::accessor{parent, h, sycl::write_only}, 0); });
    sycl::buffer<int> sub{parent, sycl::id<1>{1024}, sycl::range<1>{256}};
    q.submit([&](sycl::handler &h) { h.fill(sycl::accessor{sub, h, sycl::write_only}, 9); });
    sycl::host_accessor r{parent, sycl::read_only};
    bool same = true;
    for (size_t i = 0; i < n; ++i) same = same && r[i] == ((i >= 1024 && i < 1280) ? 9 : 0);
    check(same, "a fill of a sub-buffer lands in its parent's region only");
  });

  section("write-back at destruction", [&] {
    std::vector<int> host(n, 1);
    {
      sycl::buffer<int> b{host.data(), sycl::range<1>{n}};
      q.submit([&](sycl::handler &h) { h.fill(sycl::accessor{b, h, sycl::write_only}, 42); });
    }
    bool same = true;
    for (size_t i = 0; i < n; ++i) same = same && host[i] == 42;
    check(same, "the host data holds the buffer's once the buffer goes");
  });

  section("2-D ranged copy out", [&] {
    constexpr size_t rows = 64, cols = 128;
    std::vector<int> src(rows * cols);
    std::iota(src.begin(), src.end(), 0);
    sycl::buffer<int, 2> b{src.data(), sycl::range<2>{rows, cols}};
    std::vector<int> out(16 * 32, -1);
    q.submit([&](sycl::handler &h) {
      sycl::accessor a{b, h, sycl::range<2>{16, 32}, sycl::id<2>{8, 40}, sycl::read_only};
      h.copy(a, out.data());
    }).wait();
    bool same = true;
    for (size_t r = 0; r < 16; ++r)
      for (size_t c = 0; c < 32; ++c) same = same && out[r * 32 + c] == src[(8 + r) * cols + 40 + c];
    check(same, "a ranged 2-D accessor copies its rows out of the buffer");
  });

  section("2-D ranged copy in", [&] {
    constexpr size_t rows = 32, cols = 64;
    sycl::buffer<int, 2> b{sycl::range<2>{rows, cols}};
    q.submit([&](sycl::handler &h) { h.fill(sycl::accessor{b, h, sycl::write_only}, 0); });
    std::vector<int> in(8 * 16, 5);
    q.submit([&](sycl::handler &h) {
      sycl::accessor a{b, h, sycl::range<2>{8, 16}, sycl::id<2>{4, 10}, sycl::write_only};
      h.copy(in.data(), a);
    });
    sycl::host_accessor r{b, sycl::read_only};
    bool same = true;
    for (size_t y = 0; y < rows; ++y)
      for (size_t x = 0; x < cols; ++x) {
        bool inside = y >= 4 && y < 12 && x >= 10 && x < 26;
        same = same && r[y][x] == (inside ? 5 : 0);
      }
    check(same, "a copy into a ranged 2-D accessor writes its rows only");
  });

  section("update_host", [&] {
    std::vector<int> host(n, 0);
    sycl::buffer<int> b{host.data(), sycl::range<1>{n}};
    q.submit([&](sycl::handler &h) { h.fill(sycl::accessor{b, h, sycl::write_only}, 8); });
    q.submit([&](sycl::handler &h) { h.update_host(sycl::accessor{b, h, sycl::read_only}); }).wait();
    check(host[0] == 8 && host[n - 1] == 8, "update_host brings the data to the host memory");
  });

  return suite::summary();
}
