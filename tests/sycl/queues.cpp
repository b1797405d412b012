// In-order and out-of-order queues: ordering of memset/memcpy chains without
// host waits, explicit dependencies, barriers, profiling, queue waits.
#include "check.hpp"

#include <vector>

namespace {
// Large enough that a command still runs when the next one is enqueued, so
// that a missing dependency shows up as wrong data.
constexpr size_t kBytes = 32 << 20;
}  // namespace

int main() {
  sycl::device dev{sycl::default_selector_v};
  sycl::context ctx{dev};

  section("in-order queue chain", [&] {
    sycl::queue q{ctx, dev, sycl::property::queue::in_order{}};
    check(q.is_in_order(), "is_in_order() is true");
    auto *a = sycl::malloc_device<unsigned char>(kBytes, q);
    auto *b = sycl::malloc_device<unsigned char>(kBytes, q);
    auto *c = sycl::malloc_device<unsigned char>(kBytes, q);
    std::vector<unsigned char> hb(kBytes), hc(kBytes);
    // No events anywhere: the queue's order alone must make this correct.
    q.memset(a, 0x11, kBytes);
    q.memcpy(b, a, kBytes);
    q.memset(a, 0x22, kBytes);
    q.memcpy(c, a, kBytes);
    q.memset(a, 0x33, kBytes);
    q.memcpy(hb.data(), b, kBytes);
    q.memcpy(hc.data(), c, kBytes);
    q.wait();
    check_all(hb.data(), kBytes, (unsigned char)0x11, "in-order: copy saw the first memset");
    check_all(hc.data(), kBytes, (unsigned char)0x22, "in-order: copy saw the second memset");
    sycl::free(a, q);
    sycl::free(b, q);
    sycl::free(c, q);
  });

  section("out-of-order queue with dependencies", [&] {
    sycl::queue q{ctx, dev};
    check(!q.is_in_order(), "default queue is out of order");
    auto *a = sycl::malloc_device<unsigned char>(kBytes, q);
    auto *b = sycl::malloc_device<unsigned char>(kBytes, q);
    std::vector<unsigned char> h(kBytes);
    auto e1 = q.memset(a, 0x44, kBytes);
    auto e2 = q.memcpy(b, a, kBytes, e1);
    auto e3 = q.memset(a, 0x55, kBytes, e2);
    auto e4 = q.memcpy(h.data(), b, kBytes, e3);
    e4.wait();
    check_all(h.data(), kBytes, (unsigned char)0x44, "out-of-order: event chain ordered memset, copy, overwrite");
    // Handler form with depends_on on several events.
    auto f1 = q.memset(a, 0x66, kBytes / 2);
    auto f2 = q.memset(a + kBytes / 2, 0x77, kBytes / 2);
    auto f3 = q.submit([&](sycl::handler &h) {
      h.depends_on({f1, f2});
      h.memcpy(b, a, kBytes);
    });
    q.memcpy(h.data(), b, kBytes, f3).wait();
    check_all(h.data(), kBytes / 2, (unsigned char)0x66, "out-of-order: depends_on({e1, e2}) first half");
    check_all(h.data() + kBytes / 2, kBytes / 2, (unsigned char)0x77, "out-of-order: depends_on({e1, e2}) second half");
    sycl::free(a, q);
    sycl::free(b, q);
  });

  section("out-of-order independent commands and queue::wait", [&] {
    sycl::queue q{ctx, dev};
    constexpr int kBuffers = 8;
    constexpr size_t kSize = 1 << 20;
    std::vector<int *> bufs;
    for (int i = 0; i < kBuffers; ++i) bufs.push_back(sycl::malloc_shared<int>(kSize, q));
    for (int i = 0; i < kBuffers; ++i) q.fill(bufs[i], i * 7 + 1, kSize);
    q.wait();
    for (int i = 0; i < kBuffers; ++i)
      check_all(bufs[i], kSize, i * 7 + 1, "queue::wait covers independent fill " + std::to_string(i));
    for (auto *p : bufs) sycl::free(p, q);
  });

  section("barrier", [&] {
    sycl::queue q{ctx, dev};
    auto *a = sycl::malloc_device<unsigned char>(kBytes, q);
    std::vector<unsigned char> h(kBytes);
    q.memset(a, 0x12, kBytes);
    q.ext_oneapi_submit_barrier();
    q.memcpy(h.data(), a, kBytes).wait();
    check_all(h.data(), kBytes, (unsigned char)0x12, "barrier orders a later command after an earlier one");
    auto e = q.memset(a, 0x34, kBytes);
    auto barrier = q.ext_oneapi_submit_barrier({e});
    q.memcpy(h.data(), a, kBytes, barrier).wait();
    check_all(h.data(), kBytes, (unsigned char)0x34, "barrier with a wait list");
    sycl::free(a, q);
  });

  section("two queues, cross-queue dependency", [&] {
    sycl::queue q1{ctx, dev}, q2{ctx, dev, sycl::property::queue::in_order{}};
    auto *a = sycl::malloc_device<unsigned char>(kBytes, q1);
    std::vector<unsigned char> h(kBytes);
    auto e = q1.memset(a, 0x5c, kBytes);
    q2.memcpy(h.data(), a, kBytes, e);
    q2.wait();
    check_all(h.data(), kBytes, (unsigned char)0x5c, "copy on queue 2 waited for memset on queue 1");
    sycl::free(a, q1);
  });

  section("profiling", [&] {
    if (dev.has(sycl::aspect::queue_profiling)) {
      sycl::queue q{ctx, dev, sycl::property::queue::enable_profiling{}};
      auto *a = sycl::malloc_device<unsigned char>(kBytes, q);
      auto e = q.memset(a, 1, kBytes);
      e.wait();
      auto submit = e.get_profiling_info<sycl::info::event_profiling::command_submit>();
      auto start = e.get_profiling_info<sycl::info::event_profiling::command_start>();
      auto end = e.get_profiling_info<sycl::info::event_profiling::command_end>();
      check(submit <= start && start <= end, "profiling: submit <= start <= end");
      check(end > 0, "profiling: end time is set");
      sycl::free(a, q);
    } else {
      bool threw = false;
      try {
        sycl::queue q{ctx, dev, sycl::property::queue::enable_profiling{}};
      } catch (const sycl::exception &e) {
        threw = e.code() == sycl::errc::feature_not_supported;
      }
      check(threw, "no queue_profiling aspect: a profiling queue is refused");
    }
  });

  // ext_oneapi_empty is urQueueGetInfo(UR_QUEUE_INFO_EMPTY).
  for (bool in_order : {true, false}) {
    std::string kind = in_order ? "in-order" : "out-of-order";
    section("ext_oneapi_empty, " + kind, [&] {
      sycl::queue q = in_order ? sycl::queue{ctx, dev, sycl::property::queue::in_order{}} : sycl::queue{ctx, dev};
      check(q.ext_oneapi_empty(), kind + ": a new queue is empty");
      auto *a = sycl::malloc_device<unsigned char>(kBytes, q);
      q.memset(a, 1, kBytes);
      q.memset(a, 2, kBytes);
      q.wait();
      check(q.ext_oneapi_empty(), kind + ": empty after wait()");
      sycl::free(a, q);
    });
  }

  section("queue info and wait_and_throw", [&] {
    sycl::queue q{ctx, dev};
    check(q.get_info<sycl::info::queue::device>() == dev, "info::queue::device");
    check(q.get_info<sycl::info::queue::context>() == ctx, "info::queue::context");
    auto *a = sycl::malloc_host<int>(1024, q);
    q.fill(a, 9, 1024);
    q.wait_and_throw();
    check_all(a, 1024, 9, "wait_and_throw waited for the fill");
    sycl::free(a, q);
  });

  return suite::summary();
}
