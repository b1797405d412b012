// sycl_ext_oneapi_async_memory_alloc as libsycl 2026.2 exposes it:
// async_malloc (queue and handler), async_malloc_from_pool (queue and
// handler), async_free (queue and handler), memory_pool (properties
// initial_threshold / maximum_size / zero_init, threshold and size queries)
// and the context's default pool. Every allocation is written and read back;
// reuse after async_free is checked by address and by data.
//
// What libsycl maps these to (so that a failure names the UR call at fault):
//   async_malloc(device) / async_malloc_from_pool -> urEnqueueUSMDeviceAllocExp
//   async_free                                   -> urEnqueueUSMFreeExp
//   memory_pool(...)   -> urUSMPoolCreateExp with UR_USM_POOL_FLAG_USE_NATIVE_
//                         MEMORY_POOL_EXP and a ur_usm_pool_limits_desc_t that
//                         carries maximum_size in maxPoolableSize and
//                         initial_threshold in minDriverAllocSize (0 = unset)
//   ~memory_pool       -> urUSMPoolDestroyExp
//   get_threshold / get_reserved_size_current / get_used_size_current
//                      -> urUSMPoolGetInfoExp(RELEASE_THRESHOLD / RESERVED_
//                         CURRENT / USED_CURRENT)
//   increase_threshold_to -> urUSMPoolSetInfoExp(RELEASE_THRESHOLD)
//   context::ext_oneapi_get_default_memory_pool -> urUSMPoolGetDefaultDevicePoolExp
// libsycl 2026.2 itself refuses host and shared async allocations and
// host/shared pools, so urEnqueueUSMHostAllocExp / urEnqueueUSMSharedAllocExp
// are never reached from SYCL.
#include "check.hpp"

#include <sycl/ext/oneapi/experimental/async_alloc/async_alloc.hpp>
#include <sycl/ext/oneapi/experimental/async_alloc/memory_pool.hpp>

#include <cstdint>
#include <sstream>
#include <vector>

namespace syclex = sycl::ext::oneapi::experimental;

namespace {

constexpr size_t kMiB = 1 << 20;

// Copies n bytes of USM at p to the host after everything on q, and waits.
std::vector<unsigned char> read_back(sycl::queue &q, const void *p, size_t n) {
  std::vector<unsigned char> h(n);
  q.memcpy(h.data(), p, n).wait();
  return h;
}

// async_free(handler) of p on q once `after` is done.
sycl::event free_after(sycl::queue &q, const sycl::event &after, void *p) {
  return q.submit([&](sycl::handler &h) {
    h.depends_on(after);
    syclex::async_free(h, p);
  });
}

}  // namespace

int main() {
  sycl::device dev{sycl::default_selector_v};
  sycl::context ctx{dev};
  sycl::queue q{ctx, dev, sycl::property::queue::in_order{}};

  section("aspect", [&] {
    check(dev.has(sycl::aspect::ext_oneapi_async_memory_alloc),
          "device has aspect ext_oneapi_async_memory_alloc (UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP)");
  });

  section("async_malloc(queue, device)", [&] {
    constexpr size_t n = 4 * kMiB;
    void *p = syclex::async_malloc(q, sycl::usm::alloc::device, n);
    if (!check(p != nullptr, "async_malloc(q, device) returns an address")) return;
    q.memset(p, 0x3c, n);
    auto h = read_back(q, p, n);
    check_all(h.data(), n, (unsigned char)0x3c, "async_malloc(q, device): memset then copy back");
    check(sycl::get_pointer_type(p, ctx) == sycl::usm::alloc::device, "async_malloc(q, device): get_pointer_type");
    check(sycl::get_pointer_device(p, ctx) == dev, "async_malloc(q, device): get_pointer_device");
    q.fill(static_cast<int *>(p), 0x0badcafe, n / sizeof(int));
    auto h2 = read_back(q, p, n);
    check_all(reinterpret_cast<const int *>(h2.data()), n / sizeof(int), 0x0badcafe,
              "async_malloc(q, device): fill then copy back");
    syclex::async_free(q, p);
    q.wait();
    check(q.ext_oneapi_empty(), "async_malloc(q, device): async_free completes");
  });

  // libsycl 2026.2 serves only device memory asynchronously; it refuses the
  // other kinds before reaching the adapter.
  for (auto kind : {sycl::usm::alloc::host, sycl::usm::alloc::shared}) {
    std::string k = kind == sycl::usm::alloc::host ? "host" : "shared";
    section("async_malloc(queue, " + k + ")", [&] {
      std::string what;
      bool threw = throws_sycl([&] { syclex::async_malloc(q, kind, 4096); }, &what);
      check(threw, "async_malloc(q, " + k + ") is refused by libsycl", what);
    });
  }

  section("async_malloc(handler) and async_free(handler) on an out-of-order queue", [&] {
    sycl::queue ooo{ctx, dev};
    constexpr size_t n = 8 * kMiB;
    void *p = nullptr;
    auto alloc = ooo.submit([&](sycl::handler &h) { p = syclex::async_malloc(h, sycl::usm::alloc::device, n); });
    if (!check(p != nullptr, "async_malloc(h, device) returns an address")) return;
    auto set = ooo.submit([&](sycl::handler &h) {
      h.depends_on(alloc);
      h.memset(p, 0x6d, n);
    });
    std::vector<unsigned char> host(n);
    auto copy = ooo.submit([&](sycl::handler &h) {
      h.depends_on(set);
      h.memcpy(host.data(), p, n);
    });
    auto freed = free_after(ooo, copy, p);
    freed.wait();
    copy.wait();
    check_all(host.data(), n, (unsigned char)0x6d, "async_malloc(h): memset in a dependent command group, copy back");
    check(freed.get_info<sycl::info::event::command_execution_status>() ==
              sycl::info::event_command_status::complete,
          "async_free(h) event completes");
  });

  // The engine's smallest placement case through libsycl: alloc, memset
  // after it, free after the memset, and an allocation that depends on the
  // free takes the freed block rather than fresh space beside it. A new
  // context, so that its default pool holds nothing else.
  section("async_malloc(handler) after async_free(handler) takes the freed block", [&] {
    sycl::context fresh_ctx{dev};
    sycl::queue ooo{fresh_ctx, dev};
    constexpr size_t n = 1 * kMiB;
    void *a = nullptr;
    auto alloc = ooo.submit([&](sycl::handler &h) { a = syclex::async_malloc(h, sycl::usm::alloc::device, n); });
    auto set = ooo.submit([&](sycl::handler &h) {
      h.depends_on(alloc);
      h.memset(a, 0x11, n);
    });
    auto freed = free_after(ooo, set, a);
    void *b = nullptr;
    auto again = ooo.submit([&](sycl::handler &h) {
      h.depends_on(freed);
      b = syclex::async_malloc(h, sycl::usm::alloc::device, n);
    });
    auto set_b = ooo.submit([&](sycl::handler &h) {
      h.depends_on(again);
      h.memset(b, 0x22, n);
    });
    std::vector<unsigned char> host(n);
    ooo.submit([&](sycl::handler &h) {
      h.depends_on(set_b);
      h.memcpy(host.data(), b, n);
    }).wait();
    check_all(host.data(), n, (unsigned char)0x22, "the allocation after the free holds its own data");
    std::ostringstream why;
    why << "a at " << a << ", b at " << b;
    check(a == b, "an allocation depending on the free of a block gets that block", why.str());
    syclex::async_free(ooo, b);
    ooo.wait();
  });

  section("memory_pool basics", [&] {
    syclex::memory_pool pool{q, sycl::usm::alloc::device};
    check(pool.get_context() == ctx, "memory_pool::get_context");
    check(pool.get_device() == dev, "memory_pool::get_device");
    check(pool.get_alloc_kind() == sycl::usm::alloc::device, "memory_pool::get_alloc_kind");
    check_eq(pool.get_used_size_current(), size_t(0), "a new pool uses 0 bytes");
    check_eq(pool.get_threshold(), size_t(0), "a new pool's release threshold is 0");
    syclex::memory_pool copy = pool;
    check(copy == pool, "copies of a memory_pool compare equal");
    std::string what;
    bool threw = throws_sycl([&] { syclex::memory_pool host_pool{q, sycl::usm::alloc::host}; }, &what);
    check(threw, "a host memory_pool is refused by libsycl", what);
  });

  section("async_malloc_from_pool(queue)", [&] {
    syclex::memory_pool pool{q, sycl::usm::alloc::device};
    constexpr size_t n = 3 * kMiB + 12345;
    void *p = syclex::async_malloc_from_pool(q, n, pool);
    if (!check(p != nullptr, "async_malloc_from_pool(q) returns an address")) return;
    q.wait();
    size_t used = pool.get_used_size_current(), reserved = pool.get_reserved_size_current();
    check(used >= n, "used_size_current covers the live allocation (" + std::to_string(used) + ")");
    check(reserved >= used, "reserved_size_current >= used_size_current (" + std::to_string(reserved) + ")");
    q.memset(p, 0x99, n);
    auto h = read_back(q, p, n);
    check_all(h.data(), n, (unsigned char)0x99, "async_malloc_from_pool(q): memset then copy back");
    syclex::async_free(q, p);
    q.wait();
    check_eq(pool.get_used_size_current(), size_t(0), "used_size_current is 0 after async_free and wait");
  });

  section("async_malloc_from_pool(handler)", [&] {
    syclex::memory_pool pool{q, sycl::usm::alloc::device};
    sycl::queue ooo{ctx, dev};
    constexpr size_t n = kMiB;
    void *p = nullptr;
    auto alloc = ooo.submit([&](sycl::handler &h) { p = syclex::async_malloc_from_pool(h, n, pool); });
    if (!check(p != nullptr, "async_malloc_from_pool(h) returns an address")) return;
    auto fill = ooo.fill(static_cast<uint32_t *>(p), 0xa5a5f00du, n / 4, alloc);
    std::vector<uint32_t> host(n / 4);
    ooo.memcpy(host.data(), p, n, fill).wait();
    check_all(host.data(), n / 4, 0xa5a5f00du, "async_malloc_from_pool(h): fill then copy back");
    ooo.submit([&](sycl::handler &h) { syclex::async_free(h, p); }).wait();
    check_eq(pool.get_used_size_current(), size_t(0), "async_free(h) returns the block to its pool");
  });

  section("reuse after async_free on an in-order queue", [&] {
    // A threshold that keeps freed memory reserved, so reuse is observable.
    syclex::memory_pool pool{q, sycl::usm::alloc::device, syclex::properties{syclex::initial_threshold{64 * kMiB}}};
    constexpr size_t n = 2 * kMiB;
    std::vector<unsigned char> first(n);
    void *p1 = syclex::async_malloc_from_pool(q, n, pool);
    q.memset(p1, 0x11, n);
    q.memcpy(first.data(), p1, n);
    syclex::async_free(q, p1);
    void *p2 = syclex::async_malloc_from_pool(q, n, pool);
    q.memset(p2, 0x22, n);
    auto second = read_back(q, p2, n);
    check(p2 == p1, "the block freed earlier on the same in-order queue is reused");
    check_all(first.data(), n, (unsigned char)0x11, "the copy before async_free saw the first owner's data");
    check_all(second.data(), n, (unsigned char)0x22, "the new owner's data");
    // One cycle beside the live p2 needs room for a second block (a pool
    // that commits memory as it goes grows here, a slab pool may not);
    // many more cycles must not grow the pool further.
    void *p3 = syclex::async_malloc_from_pool(q, n, pool);
    q.memset(p3, 0x33, n);
    syclex::async_free(q, p3);
    q.wait();
    size_t reserved = pool.get_reserved_size_current();
    for (int i = 0; i < 50; ++i) {
      void *p = syclex::async_malloc_from_pool(q, n, pool);
      q.memset(p, (unsigned char)i, n);
      syclex::async_free(q, p);
    }
    syclex::async_free(q, p2);
    q.wait();
    size_t after = pool.get_reserved_size_current();
    check(after <= reserved, "50 more alloc/free cycles reserve nothing more (" + std::to_string(reserved) + " -> " +
                                 std::to_string(after) + ")");
    check_eq(pool.get_used_size_current(), size_t(0), "everything freed: used is 0");
  });

  section("cross-queue reuse through events", [&] {
    syclex::memory_pool pool{q, sycl::usm::alloc::device, syclex::properties{syclex::initial_threshold{64 * kMiB}}};
    sycl::queue qa{ctx, dev}, qb{ctx, dev};
    constexpr size_t n = kMiB;
    void *p = nullptr;
    auto alloc = qa.submit([&](sycl::handler &h) { p = syclex::async_malloc_from_pool(h, n, pool); });
    auto set = qa.memset(p, 0x42, n, alloc);
    std::vector<unsigned char> host(n);
    auto copy = qa.memcpy(host.data(), p, n, set);
    // Freed on the other queue, after the copy.
    auto freed = free_after(qb, copy, p);
    void *again = nullptr;
    auto realloc = qa.submit([&](sycl::handler &h) {
      h.depends_on(freed);
      again = syclex::async_malloc_from_pool(h, n, pool);
    });
    auto set2 = qa.memset(again, 0x43, n, realloc);
    std::vector<unsigned char> host2(n);
    qa.memcpy(host2.data(), again, n, set2).wait();
    check(again == p, "an allocation waiting on the free's event reuses the block");
    check_all(host.data(), n, (unsigned char)0x42, "the first owner's copy is intact");
    check_all(host2.data(), n, (unsigned char)0x43, "the second owner's data");
    qa.submit([&](sycl::handler &h) { syclex::async_free(h, again); }).wait();
  });

  section("release threshold", [&] {
    syclex::memory_pool pool{q, sycl::usm::alloc::device, syclex::properties{syclex::initial_threshold{kMiB}}};
    check_eq(pool.get_threshold(), kMiB, "initial_threshold is the pool's release threshold");
    pool.increase_threshold_to(64 * kMiB);
    check_eq(pool.get_threshold(), 64 * kMiB, "increase_threshold_to raises it");
    pool.increase_threshold_to(2 * kMiB);
    check_eq(pool.get_threshold(), 64 * kMiB, "increase_threshold_to a lower value changes nothing");
    // Threshold 64 MiB: a freed 4 MiB block stays reserved (64 MiB leaves
    // room for a backend's slab granularity; CUDA reserves 32 MiB at once).
    void *p = syclex::async_malloc_from_pool(q, 4 * kMiB, pool);
    syclex::async_free(q, p);
    q.wait();
    check(pool.get_reserved_size_current() >= 4 * kMiB, "freed memory under the threshold stays reserved (" +
                                                            std::to_string(pool.get_reserved_size_current()) + ")");
    // Threshold 0: freed memory goes back at the next synchronisation.
    syclex::memory_pool lean{q, sycl::usm::alloc::device};
    p = syclex::async_malloc_from_pool(q, 4 * kMiB, lean);
    q.wait();
    check(lean.get_reserved_size_current() >= 4 * kMiB, "threshold 0: a live allocation is reserved");
    syclex::async_free(q, p);
    q.wait();
    check_eq(lean.get_reserved_size_current(), size_t(0), "threshold 0: nothing reserved after free and wait");
  });

  section("maximum_size", [&] {
    syclex::memory_pool pool{q, sycl::usm::alloc::device, syclex::properties{syclex::maximum_size{4 * kMiB}}};
    void *small = syclex::async_malloc_from_pool(q, kMiB, pool);
    if (!check(small != nullptr, "an allocation under maximum_size succeeds")) return;
    q.memset(small, 0x77, kMiB);
    std::string what;
    void *big = nullptr;
    // Far past the limit: a backend may round the limit up to its own
    // granularity (CUDA pools grow in 32 MiB steps).
    bool threw = throws_sycl([&] { big = syclex::async_malloc_from_pool(q, 256 * kMiB, pool); }, &what);
    check(threw, "an allocation past maximum_size throws", what);
    if (big) syclex::async_free(q, big);
    auto h = read_back(q, small, kMiB);
    check_all(h.data(), kMiB, (unsigned char)0x77, "the earlier allocation is intact after the failure");
    syclex::async_free(q, small);
    q.wait();
  });

  section("zero_init", [&] {
    syclex::memory_pool pool{q, sycl::usm::alloc::device,
                             syclex::properties{syclex::zero_init{}, syclex::initial_threshold{64 * kMiB}}};
    constexpr size_t n = kMiB;
    void *p = syclex::async_malloc_from_pool(q, n, pool);
    auto h = read_back(q, p, n);
    check_all(h.data(), n, (unsigned char)0, "zero_init: a fresh block reads as zeros");
    q.memset(p, 0xff, n);
    syclex::async_free(q, p);
    void *again = syclex::async_malloc_from_pool(q, n, pool);
    h = read_back(q, again, n);
    check_all(h.data(), n, (unsigned char)0, "zero_init: a reused block reads as zeros again");
    syclex::async_free(q, again);
    q.wait();
  });

  section("default memory pool", [&] {
    auto pool = ctx.ext_oneapi_get_default_memory_pool(dev, sycl::usm::alloc::device);
    auto same = ctx.ext_oneapi_get_default_memory_pool(dev, sycl::usm::alloc::device);
    check(pool == same, "the default pool is the same object each time");
    check(pool.get_alloc_kind() == sycl::usm::alloc::device, "default pool kind is device");
    check(pool.get_device() == dev, "default pool device");
    size_t before = pool.get_used_size_current();
    constexpr size_t n = 2 * kMiB;
    void *p = syclex::async_malloc(q, sycl::usm::alloc::device, n);
    q.memset(p, 0x5e, n);
    auto h = read_back(q, p, n);
    check_all(h.data(), n, (unsigned char)0x5e, "async_malloc from the default pool: data");
    check(pool.get_used_size_current() >= before + n, "async_malloc(q, device) draws from the default pool");
    void *q_p = syclex::async_malloc_from_pool(q, n, pool);
    check(q_p != nullptr && q_p != p, "async_malloc_from_pool(default pool) gives a distinct live block");
    syclex::async_free(q, q_p);
    syclex::async_free(q, p);
    q.wait();
    check_eq(pool.get_used_size_current(), before, "used size of the default pool is back after the frees");
    // The default pool's threshold is the backend's choice (CUDA may keep
    // everything: SIZE_MAX); raise it where there is room.
    size_t threshold = pool.get_threshold();
    check_eq(same.get_threshold(), threshold, "both handles of the default pool report one threshold");
    if (threshold <= SIZE_MAX - 16 * kMiB) {
      pool.increase_threshold_to(threshold + 16 * kMiB);
      check_eq(same.get_threshold(), threshold + 16 * kMiB, "a threshold raised through one handle is seen through the other");
    }
  });

  section("checked frees", [&] {
    constexpr size_t n = kMiB;
    void *p = syclex::async_malloc(q, sycl::usm::alloc::device, n);
    q.memset(p, 0x2b, n);
    std::string what;
    bool threw = throws_sycl([&] { syclex::async_free(q, static_cast<char *>(p) + 64); }, &what);
    check(threw, "async_free of an interior pointer throws (urEnqueueUSMFreeExp: INVALID_MEM_OBJECT)", what);
    auto h = read_back(q, p, n);
    check_all(h.data(), n, (unsigned char)0x2b, "the allocation is intact after the refused free");
    syclex::async_free(q, p);
    threw = throws_sycl([&] { syclex::async_free(q, p); }, &what);
    check(threw, "a second async_free of the same pointer throws", what);
    q.wait();
  });

  return suite::summary();
}
