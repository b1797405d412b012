// Device discovery and selection: what libsycl finds through the adapter
// named by UR_ADAPTERS_FORCE_LOAD, the info it reads from it, and the
// selectors built on that info.
#include "check.hpp"

#include <link.h>

#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// Every shared object of the process whose file name contains "libur_adapter".
std::vector<std::string> loaded_adapters() {
  std::vector<std::string> found;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *out) {
        std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (name.find("libur_adapter") != std::string::npos)
          static_cast<std::vector<std::string> *>(out)->push_back(name);
        return 0;
      },
      &found);
  return found;
}

std::string real_path(const std::string &path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) ? std::string(buf) : path;
}

bool backend_expected(const sycl::platform &p) { return p.get_backend() == suite::expected_backend(); }

}  // namespace

int main() {
  section("adapter", [&] {
    // libsycl loads adapters on first use; asking for platforms does that.
    auto platforms = sycl::platform::get_platforms();
    const char *forced = std::getenv("UR_ADAPTERS_FORCE_LOAD");
    check(forced && *forced, "UR_ADAPTERS_FORCE_LOAD is set");
    auto adapters = loaded_adapters();
    check_eq(adapters.size(), size_t(1), "exactly one adapter library is loaded");
    if (forced && !adapters.empty())
      check(real_path(adapters[0]) == real_path(forced), "the loaded adapter is the forced one",
            adapters[0] + " vs " + forced);
  });

  section("platforms", [&] {
    auto platforms = sycl::platform::get_platforms();
    check(!platforms.empty(), "at least one platform");
    for (auto &p : platforms) {
      auto name = p.get_info<sycl::info::platform::name>();
      std::printf("  platform: %s | %s | %s\n", name.c_str(), p.get_info<sycl::info::platform::vendor>().c_str(),
                  p.get_info<sycl::info::platform::version>().c_str());
      check(backend_expected(p), "platform '" + name + "' has the expected backend");
      check(!name.empty(), "platform name is not empty");
      check(!p.get_info<sycl::info::platform::vendor>().empty(), "platform vendor is not empty");
      check(!p.get_info<sycl::info::platform::version>().empty(), "platform version is not empty");
      check(!p.get_devices().empty(), "platform '" + name + "' has devices");
    }
  });

  section("device info", [&] {
    for (auto &d : sycl::device::get_devices()) {
      auto name = d.get_info<sycl::info::device::name>();
      std::printf("  device: %s | %s | driver %s | %u units | %llu bytes (max alloc %llu)\n", name.c_str(),
                  d.get_info<sycl::info::device::vendor>().c_str(),
                  d.get_info<sycl::info::device::driver_version>().c_str(),
                  d.get_info<sycl::info::device::max_compute_units>(),
                  (unsigned long long)d.get_info<sycl::info::device::global_mem_size>(),
                  (unsigned long long)d.get_info<sycl::info::device::max_mem_alloc_size>());
      check(!name.empty(), "device name is not empty");
      check(!d.get_info<sycl::info::device::vendor>().empty(), "device vendor is not empty");
      check(d.is_cpu(), "'" + name + "' is a CPU device");
      check(d.get_info<sycl::info::device::device_type>() == sycl::info::device_type::cpu, "device_type is cpu");
      check(d.get_info<sycl::info::device::max_compute_units>() > 0, "max_compute_units > 0");
      auto global = d.get_info<sycl::info::device::global_mem_size>();
      auto max_alloc = d.get_info<sycl::info::device::max_mem_alloc_size>();
      check(global > 0, "global_mem_size > 0");
      check(max_alloc > 0 && max_alloc <= global, "0 < max_mem_alloc_size <= global_mem_size");
      check(d.get_platform().get_backend() == suite::expected_backend(), "device backend");
      check(d.get_info<sycl::info::device::platform>() == d.get_platform(), "info::device::platform");
      check(d.has(sycl::aspect::usm_device_allocations), "aspect usm_device_allocations");
      check(d.has(sycl::aspect::usm_host_allocations), "aspect usm_host_allocations");
      check(d.has(sycl::aspect::usm_shared_allocations), "aspect usm_shared_allocations");
      check(d.get_info<sycl::info::device::is_available>(), "is_available");
    }
  });

  section("selection", [&] {
    sycl::device by_default{sycl::default_selector_v};
    check(by_default.get_platform().get_backend() == suite::expected_backend(), "default_selector_v picks our device");
    sycl::device cpu{sycl::cpu_selector_v};
    check(cpu.is_cpu(), "cpu_selector_v picks a CPU");
    bool threw = false;
    try {
      sycl::device gpu{sycl::gpu_selector_v};
    } catch (const sycl::exception &e) {
      threw = e.code() == sycl::errc::runtime;
    }
    check(threw, "gpu_selector_v throws errc::runtime (no GPU among our devices)");
    check(!sycl::device::get_devices(sycl::info::device_type::cpu).empty(), "get_devices(cpu) is not empty");
    check(sycl::device::get_devices(sycl::info::device_type::gpu).empty(), "get_devices(gpu) is empty");
    // A selector of our own: prefers the device with the most compute units.
    auto most_units = [](const sycl::device &d) { return int(d.get_info<sycl::info::device::max_compute_units>()); };
    sycl::device chosen{most_units};
    int best = 0;
    for (auto &d : sycl::device::get_devices()) best = std::max(best, most_units(d));
    check_eq(most_units(chosen), best, "custom selector gets the highest score");
    // A selector that rejects everything.
    threw = false;
    try {
      sycl::device none{[](const sycl::device &) { return -1; }};
    } catch (const sycl::exception &e) {
      threw = e.code() == sycl::errc::runtime;
    }
    check(threw, "a selector rejecting every device throws errc::runtime");
  });

  section("context and queue", [&] {
    for (auto &d : sycl::device::get_devices()) {
      sycl::context ctx{d};
      check_eq(ctx.get_devices().size(), size_t(1), "context has one device");
      check(ctx.get_devices()[0] == d, "context holds the device");
      check(ctx.get_platform() == d.get_platform(), "context platform");
      sycl::queue q{ctx, d};
      check(q.get_device() == d, "queue device");
      check(q.get_context() == ctx, "queue context");
      check(q.get_backend() == suite::expected_backend(), "queue backend");
    }
    // A context over every device of a platform.
    for (auto &p : sycl::platform::get_platforms()) {
      auto devices = p.get_devices();
      sycl::context ctx{devices};
      check_eq(ctx.get_devices().size(), devices.size(), "platform-wide context has every device");
    }
  });

  return suite::summary();
}
