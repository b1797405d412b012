// Events: status, waits (member, static, on lists), depends_on across
// queues, host tasks ordered with device commands, and many events at once.
#include "check.hpp"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace {
constexpr size_t kBytes = 16 << 20;
using status = sycl::info::event_command_status;
}  // namespace

int main() {
  sycl::device dev{sycl::default_selector_v};
  sycl::context ctx{dev};
  sycl::queue q{ctx, dev};

  section("event status", [&] {
    auto *a = sycl::malloc_device<unsigned char>(kBytes, q);
    auto e = q.memset(a, 1, kBytes);
    auto s = e.get_info<sycl::info::event::command_execution_status>();
    check(s == status::submitted || s == status::running || s == status::complete,
          "status of a new command is submitted, running or complete");
    e.wait();
    check(e.get_info<sycl::info::event::command_execution_status>() == status::complete, "complete after wait()");
    sycl::event empty;
    check(empty.get_info<sycl::info::event::command_execution_status>() == status::complete,
          "a default-constructed event is complete");
    sycl::free(a, q);
  });

  section("waits", [&] {
    auto *a = sycl::malloc_device<unsigned char>(kBytes, q);
    auto *b = sycl::malloc_device<unsigned char>(kBytes, q);
    std::vector<unsigned char> ha(kBytes), hb(kBytes);
    auto e1 = q.memset(a, 0x21, kBytes);
    auto e2 = q.memset(b, 0x43, kBytes);
    sycl::event::wait({e1, e2});
    check(e1.get_info<sycl::info::event::command_execution_status>() == status::complete &&
              e2.get_info<sycl::info::event::command_execution_status>() == status::complete,
          "event::wait(list) completes every event");
    auto c1 = q.memcpy(ha.data(), a, kBytes);
    auto c2 = q.memcpy(hb.data(), b, kBytes);
    c1.wait_and_throw();
    c2.wait();
    check_all(ha.data(), kBytes, (unsigned char)0x21, "wait_and_throw then data");
    check_all(hb.data(), kBytes, (unsigned char)0x43, "wait then data");
    sycl::free(a, q);
    sycl::free(b, q);
  });

  section("depends_on chains", [&] {
    // Alternating between two out-of-order queues: step i sets `a` to i on
    // one queue, then copies `a` into chunk i of `b` on the other. Each chunk
    // holds i only if every set waited for the previous copy and every copy
    // for its set.
    sycl::queue q2{ctx, dev};
    constexpr int kSteps = 6;
    constexpr size_t chunk = kBytes / kSteps;
    auto *a = sycl::malloc_device<unsigned char>(chunk, q);
    auto *b = sycl::malloc_device<unsigned char>(chunk * kSteps, q);
    sycl::event last;
    for (int i = 1; i <= kSteps; ++i) {
      auto &first = (i % 2) ? q : q2;
      auto &second = (i % 2) ? q2 : q;
      last = first.memset(a, (unsigned char)i, chunk, last);
      last = second.submit([&](sycl::handler &cgh) {
        cgh.depends_on(last);
        cgh.memcpy(b + (i - 1) * chunk, a, chunk);
      });
    }
    std::vector<unsigned char> h(chunk * kSteps);
    q.memcpy(h.data(), b, chunk * kSteps, last).wait();
    for (int i = 1; i <= kSteps; ++i)
      check_all(h.data() + (i - 1) * chunk, chunk, (unsigned char)i,
                "cross-queue chain: chunk " + std::to_string(i) + " holds step " + std::to_string(i));
    sycl::free(a, q);
    sycl::free(b, q);
  });

  section("host task ordered with device commands", [&] {
    auto *a = sycl::malloc_shared<int>(1024, q);
    std::vector<int> h(1024);
    auto fill = q.fill(a, 1, 1024);
    std::atomic<bool> ran{false};
    auto host = q.submit([&](sycl::handler &cgh) {
      cgh.depends_on(fill);
      cgh.host_task([=, &ran] {
        // Slow on purpose: a copy that does not wait for us would see 1s.
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        for (int i = 0; i < 1024; ++i) a[i] += 41;
        ran = true;
      });
    });
    q.memcpy(h.data(), a, 1024 * sizeof(int), host).wait();
    check(ran.load(), "host task ran");
    check_all(h.data(), 1024, 42, "copy after the host task saw its writes");
    sycl::free(a, q);
  });

  section("many events", [&] {
    constexpr int kCommands = 2000;
    auto *a = sycl::malloc_host<int>(kCommands, q);
    std::vector<sycl::event> events;
    for (int i = 0; i < kCommands; ++i) events.push_back(q.fill(a + i, i, 1));
    sycl::event::wait(events);
    bool all = true;
    for (int i = 0; i < kCommands; ++i) all = all && a[i] == i;
    check(all, "2000 independent fills, each with its own event");
    // One command waiting on all of them.
    auto *b = sycl::malloc_host<int>(kCommands, q);
    q.memcpy(b, a, kCommands * sizeof(int), events).wait();
    all = true;
    for (int i = 0; i < kCommands; ++i) all = all && b[i] == i;
    check(all, "a copy waiting on 2000 events");
    sycl::free(a, q);
    sycl::free(b, q);
  });

  return suite::summary();
}
