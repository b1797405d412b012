// Scenarios 7 and 9 of ur_bench: the cost of one iteration as a SYCL program
// sees it, through Intel's libsycl.so.9.
//
// Scenario 7, allocate + memset + free:
//   async:    async_malloc(device) + memset + async_free, all enqueued on an
//             in-order queue, one wait per batch (sycl_ext_oneapi_async_
//             memory_alloc; libsycl turns these into urEnqueueUSMDeviceAllocExp
//             / urEnqueueUSMFreeExp).
//   blocking: malloc_device + memset + wait + free per iteration.
// Scenario 9, a buffer's life:
//   buffer:   a sycl::buffer over host memory, handler::fill through a
//             write_only accessor (urEnqueueMemBufferFill), and the buffer's
//             destruction, which waits and writes the data back to the host
//             memory. The last iteration of every batch checks the host
//             memory, so that a fill that never reaches it fails the run.
//
// Which UR adapter and device serve it is chosen by the environment that
// ur_bench sets (UR_ADAPTERS_FORCE_LOAD, ONEAPI_DEVICE_SELECTOR,
// OCL_ICD_VENDORS). Output: one JSON object per line on stdout:
//   {"kind":"device", ...}  the device the default selector picked
//   {"kind":"sample", ...}  one timed batch
//   {"kind":"error", ...}   why it stopped (exit status 1)
//
// usage: async_bench --mode async|blocking|buffer --sizes N[,N...] --max-iterations N
//                    --min-iterations N --repetitions N --target-ms N
#include <sycl/accessor.hpp>
#include <sycl/buffer.hpp>
#include <sycl/handler.hpp>
#include <sycl/properties/queue_properties.hpp>
#include <sycl/queue.hpp>
#include <sycl/usm.hpp>
#include <sycl/ext/oneapi/experimental/async_alloc/async_alloc.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace syclex = sycl::ext::oneapi::experimental;

namespace {

struct Options {
  std::string mode = "async";
  std::vector<size_t> sizes{1024};
  size_t max_iterations = 20000;
  size_t min_iterations = 8;
  size_t repetitions = 7;
  double target_ms = 150;
};

std::string escaped(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

[[noreturn]] void fail(const std::string &stage, const std::string &what) {
  std::printf("{\"kind\":\"error\",\"stage\":\"%s\",\"what\":\"%s\"}\n", escaped(stage).c_str(), escaped(what).c_str());
  std::fflush(stdout);
  std::exit(1);
}

const char *backend_name(sycl::backend b) {
  switch (b) {
    case sycl::backend::opencl: return "opencl";
    case sycl::backend::ext_oneapi_level_zero: return "level_zero";
    case sycl::backend::ext_oneapi_cuda: return "cuda";
    case sycl::backend::ext_oneapi_hip: return "hip";
    case sycl::backend::ext_oneapi_native_cpu: return "native_cpu";
    case sycl::backend::ext_oneapi_offload: return "offload";
    default: return "other";
  }
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i], value = argv[i + 1];
    if (key == "--mode") {
      o.mode = value;
    } else if (key == "--sizes") {
      o.sizes.clear();
      size_t start = 0;
      while (start <= value.size()) {
        size_t comma = value.find(',', start);
        if (comma == std::string::npos) comma = value.size();
        o.sizes.push_back(std::strtoull(value.substr(start, comma - start).c_str(), nullptr, 10));
        start = comma + 1;
      }
    } else if (key == "--max-iterations") {
      o.max_iterations = std::strtoull(value.c_str(), nullptr, 10);
    } else if (key == "--min-iterations") {
      o.min_iterations = std::strtoull(value.c_str(), nullptr, 10);
    } else if (key == "--repetitions") {
      o.repetitions = std::strtoull(value.c_str(), nullptr, 10);
    } else if (key == "--target-ms") {
      o.target_ms = std::strtod(value.c_str(), nullptr);
    } else {
      fail("arguments", "unknown option " + key);
    }
  }
  if ((o.mode != "async" && o.mode != "blocking" && o.mode != "buffer") || o.sizes.empty() ||
      std::count(o.sizes.begin(), o.sizes.end(), size_t(0)) || o.repetitions == 0 || o.min_iterations == 0)
    fail("arguments", "bad arguments");
  return o;
}

// Scenario 9's iterations over `host` (its size is the buffer's). Each fills
// with the next value of a counter that runs across batches; the last one of
// a batch first sets the host memory to another value, then checks that
// every byte holds the fill once the buffer went (libsycl makes the buffer
// with UR_MEM_FLAG_USE_HOST_POINTER, so it may be that memory itself).
void buffer_rounds(sycl::queue &q, std::vector<unsigned char> &host, size_t n) {
  static unsigned counter = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto value = static_cast<unsigned char>(++counter);
    const bool check = i + 1 == n;
    if (check) std::fill(host.begin(), host.end(), static_cast<unsigned char>(~value));
    {
      sycl::buffer<unsigned char> b(host.data(), sycl::range<1>(host.size()));
      q.submit([&](sycl::handler &h) {
        sycl::accessor a(b, h, sycl::write_only);
        h.fill(a, value);
      });
    }  // ~buffer: waits for the fill, writes the data back to host
    if (check) {
      auto wrong = std::find_if(host.begin(), host.end(), [&](unsigned char c) { return c != value; });
      if (wrong != host.end())
        fail("write-back", "byte " + std::to_string(wrong - host.begin()) + " of " + std::to_string(host.size()) +
                               " reads " + std::to_string(*wrong) + " after the buffer went, not " +
                               std::to_string(value));
    }
  }
}

// One batch of n iterations; returns the seconds it took, the final wait
// included.
double batch(sycl::queue &q, const Options &o, std::vector<unsigned char> &host, size_t size, size_t n) {
  auto start = std::chrono::steady_clock::now();
  if (o.mode == "buffer") {
    buffer_rounds(q, host, n);
  } else if (o.mode == "async") {
    for (size_t i = 0; i < n; ++i) {
      void *p = syclex::async_malloc(q, sycl::usm::alloc::device, size);
      q.memset(p, 0, size);
      syclex::async_free(q, p);
    }
    q.wait_and_throw();
  } else {
    for (size_t i = 0; i < n; ++i) {
      void *p = sycl::malloc_device(size, q);
      if (!p) fail("malloc_device", "returned null");
      q.memset(p, 0, size).wait_and_throw();
      sycl::free(p, q);
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  // The default selector: the environment decides which device it sees.
  std::unique_ptr<sycl::queue> queue;
  try {
    queue = std::make_unique<sycl::queue>(sycl::property_list{sycl::property::queue::in_order()});
  } catch (const std::exception &e) {
    fail("queue", e.what());
  }
  sycl::queue &q = *queue;
  sycl::device d = q.get_device();
  std::printf("{\"kind\":\"device\",\"name\":\"%s\",\"platform\":\"%s\",\"backend\":\"%s\",\"async_aspect\":%s}\n",
              escaped(d.get_info<sycl::info::device::name>()).c_str(),
              escaped(d.get_platform().get_info<sycl::info::platform::name>()).c_str(), backend_name(d.get_backend()),
              d.has(sycl::aspect::ext_oneapi_async_memory_alloc) ? "true" : "false");
  std::fflush(stdout);
  for (size_t size : o.sizes) {
    std::vector<unsigned char> host(o.mode == "buffer" ? size : 0);
    try {
      // The warm-up batch also sizes the timed ones to about target_ms.
      size_t warmup = std::max(o.min_iterations, std::min(o.max_iterations, size_t(512)));
      double per_iteration = batch(q, o, host, size, warmup) / double(warmup);
      size_t n = per_iteration > 0 ? size_t(o.target_ms / 1e3 / per_iteration) : o.max_iterations;
      n = std::clamp(n, o.min_iterations, std::max(o.min_iterations, o.max_iterations));
      for (size_t r = 0; r < o.repetitions; ++r) {
        double seconds = batch(q, o, host, size, n);
        std::printf("{\"kind\":\"sample\",\"mode\":\"%s\",\"size\":%zu,\"iterations\":%zu,\"ns_per_iteration\":%.3f}\n",
                    o.mode.c_str(), size, n, seconds * 1e9 / double(n));
        std::fflush(stdout);
      }
    } catch (const std::exception &e) {
      fail(o.mode == "async"    ? "async_malloc/memset/async_free"
           : o.mode == "buffer" ? "buffer/fill/write-back"
                                : "malloc_device/memset/wait/free",
           e.what());
    }
  }
  std::printf("{\"kind\":\"done\"}\n");
  return 0;
}
