// OpenCL interoperability: SYCL objects made from native OpenCL objects and
// back (make_device/make_platform/make_context/make_queue/make_event and
// get_native), a cl_program the program builds itself from OpenCL C source
// wrapped with make_kernel_bundle, one of its cl_kernels wrapped with
// make_kernel and launched, and the reference counts of the native objects
// checked to be the caller's own again once the SYCL objects are gone.
// (get_native on OpenCL hands out a retained object, which the caller
// releases: the checks do.)
//
// OpenCL is reached through the ICD loader (libOpenCL.so.1) opened with
// dlopen, so the program needs no OpenCL development package; the types
// come from the headers shipped with libsycl. On a backend other than
// OpenCL there are no native OpenCL objects and the program checks nothing.
#include "check.hpp"

#include <sycl/backend/opencl.hpp>

#include <CL/cl.h>
#include <dlfcn.h>

#include <vector>

namespace {

// The OpenCL entry points this program calls.
struct OpenCl {
  decltype(&clCreateProgramWithSource) create_program = nullptr;
  decltype(&clBuildProgram) build_program = nullptr;
  decltype(&clGetProgramInfo) program_info = nullptr;
  decltype(&clReleaseProgram) release_program = nullptr;
  decltype(&clCreateKernel) create_kernel = nullptr;
  decltype(&clGetKernelInfo) kernel_info = nullptr;
  decltype(&clReleaseKernel) release_kernel = nullptr;
  decltype(&clGetContextInfo) context_info = nullptr;
  decltype(&clReleaseContext) release_context = nullptr;
  decltype(&clReleaseCommandQueue) release_queue = nullptr;
  decltype(&clGetCommandQueueInfo) queue_info = nullptr;
  decltype(&clCreateUserEvent) create_user_event = nullptr;
  decltype(&clSetUserEventStatus) set_user_event_status = nullptr;
  decltype(&clGetEventInfo) event_info = nullptr;
  decltype(&clReleaseEvent) release_event = nullptr;

  bool load() {
    void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    bool ok = true;
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      ok = ok && fn != nullptr;
    };
    get(create_program, "clCreateProgramWithSource");
    get(build_program, "clBuildProgram");
    get(program_info, "clGetProgramInfo");
    get(release_program, "clReleaseProgram");
    get(create_kernel, "clCreateKernel");
    get(kernel_info, "clGetKernelInfo");
    get(release_kernel, "clReleaseKernel");
    get(context_info, "clGetContextInfo");
    get(release_context, "clReleaseContext");
    get(release_queue, "clReleaseCommandQueue");
    get(queue_info, "clGetCommandQueueInfo");
    get(create_user_event, "clCreateUserEvent");
    get(set_user_event_status, "clSetUserEventStatus");
    get(event_info, "clGetEventInfo");
    get(release_event, "clReleaseEvent");
    return ok;
  }
};

OpenCl cl;

// The reference count OpenCL reports for `object` through its info query
// `query` and property `param`, or 0 when the query fails.
template <typename Query, typename Object, typename Param>
cl_uint refs(Query query, Object object, Param param) {
  cl_uint n = 0;
  return query(object, param, sizeof n, &n, nullptr) == CL_SUCCESS ? n : 0;
}
cl_uint program_refs(cl_program p) { return refs(cl.program_info, p, CL_PROGRAM_REFERENCE_COUNT); }
cl_uint kernel_refs(cl_kernel k) { return refs(cl.kernel_info, k, CL_KERNEL_REFERENCE_COUNT); }
cl_uint context_refs(cl_context c) { return refs(cl.context_info, c, CL_CONTEXT_REFERENCE_COUNT); }
cl_uint queue_refs(cl_command_queue q) { return refs(cl.queue_info, q, CL_QUEUE_REFERENCE_COUNT); }
cl_uint event_refs(cl_event e) { return refs(cl.event_info, e, CL_EVENT_REFERENCE_COUNT); }

const char *kSource =
    "kernel void fill_index(global uint *out, uint base) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = base + (uint)i;\n"
    "}\n";

constexpr size_t kN = 1024;

}  // namespace

int main() {
  if (suite::expected_backend() != sycl::backend::opencl) {
    // No OpenCL objects behind this backend: asking for them is an error
    // libsycl reports as an exception, never an abort.
    sycl::device dev{sycl::default_selector_v};
    check(dev.get_backend() == suite::expected_backend(), "the device is on the expected backend");
    std::string what;
    check(throws_sycl([&] { (void)sycl::get_native<sycl::backend::opencl>(dev); }, &what),
          "get_native<opencl> of a device of another backend throws", what);
    sycl::queue q{dev};
    check(throws_sycl([&] { (void)sycl::get_native<sycl::backend::opencl>(q); }, &what),
          "get_native<opencl> of a queue of another backend throws", what);
    return suite::summary();
  }
  if (!check(cl.load(), "libOpenCL.so.1 and its entry points load")) return suite::summary();

  sycl::device dev{sycl::default_selector_v};
  sycl::context ctx{dev};
  sycl::queue q{ctx, dev, sycl::property::queue::in_order{}};

  section("device and platform round trips", [&] {
    cl_device_id cd = sycl::get_native<sycl::backend::opencl>(dev);
    check(cd != nullptr, "get_native(device) is a cl_device_id");
    sycl::device again = sycl::make_device<sycl::backend::opencl>(cd);
    check(again == dev, "make_device(get_native(device)) is the same device");
    check(sycl::get_native<sycl::backend::opencl>(again) == cd, "get_native of the made device is the same id");
    cl_platform_id cp = sycl::get_native<sycl::backend::opencl>(dev.get_platform());
    sycl::platform p = sycl::make_platform<sycl::backend::opencl>(cp);
    check(p == dev.get_platform(), "make_platform(get_native(platform)) is the same platform");
  });

  cl_context cc = sycl::get_native<sycl::backend::opencl>(ctx);
  section("context from native", [&] {
    cl_uint before = context_refs(cc);
    {
      sycl::context made = sycl::make_context<sycl::backend::opencl>(cc);
      cl_context native = sycl::get_native<sycl::backend::opencl>(made);
      check(native == cc, "get_native of the made context is the cl_context");
      cl.release_context(native);
      auto devices = made.get_devices();
      check(devices.size() == 1 && devices[0] == dev, "the made context has the cl_context's device");
      // USM in a context made from a native one.
      sycl::queue mq{made, dev, sycl::property::queue::in_order{}};
      auto *p = sycl::malloc_device<unsigned>(kN, mq);
      check(p != nullptr, "malloc_device in the made context");
      std::vector<unsigned> host(kN);
      mq.fill(p, 0x1234u, kN);
      mq.memcpy(host.data(), p, kN * sizeof(unsigned)).wait();
      check_all(host.data(), kN, 0x1234u, "fill and copy in the made context");
      sycl::free(p, mq);
    }
    // libsycl keeps one reference of a context made by make_context (it
    // calls urContextRetain after urContextCreateWithNativeHandle and
    // releases once), and this adapter's context holds one OpenCL
    // reference while it lives: the user's object survives, with at most
    // that one reference more.
    cl_uint after = context_refs(cc);
    check(after == before || after == before + 1, "the cl_context survives the made context",
          "reference count " + std::to_string(after) + ", " + std::to_string(before) + " before");
  });

  section("queue from native", [&] {
    cl_command_queue cq = sycl::get_native<sycl::backend::opencl>(q);
    cl_uint before = queue_refs(cq);
    {
      sycl::queue made = sycl::make_queue<sycl::backend::opencl>(cq, ctx);
      cl_command_queue native = sycl::get_native<sycl::backend::opencl>(made);
      check(native == cq, "get_native of the made queue is the cl_command_queue");
      cl.release_queue(native);
      check(made.get_device() == dev, "the made queue is on the queue's device");
      auto *p = sycl::malloc_device<unsigned>(kN, made);
      std::vector<unsigned> host(kN);
      made.fill(p, 0xabcdu, kN).wait();
      made.memcpy(host.data(), p, kN * sizeof(unsigned)).wait();
      check_all(host.data(), kN, 0xabcdu, "fill and copy on the made queue");
      sycl::free(p, made);
    }
    check_eq(queue_refs(cq), before, "the queue's reference count is back after the made queue goes");
    cl.release_queue(cq);
  });

  section("event from native", [&] {
    cl_int err = CL_SUCCESS;
    cl_event user = cl.create_user_event(cc, &err);
    if (!check(err == CL_SUCCESS && user, "clCreateUserEvent")) return;
    cl_uint before = event_refs(user);
    {
      sycl::event e = sycl::make_event<sycl::backend::opencl>(std::vector<cl_event>{user}, ctx);
      check(e.get_info<sycl::info::event::command_execution_status>() != sycl::info::event_command_status::complete,
            "an unset user event is not complete");
      cl.set_user_event_status(user, CL_COMPLETE);
      e.wait();
      check(e.get_info<sycl::info::event::command_execution_status>() == sycl::info::event_command_status::complete,
            "the made event completes with the user event");
      auto natives = sycl::get_native<sycl::backend::opencl>(e);
      check(!natives.empty() && natives[0] == user, "get_native of the made event is the cl_event");
      for (cl_event n : natives) cl.release_event(n);
    }
    check_eq(event_refs(user), before, "the event's reference count is back after the made event goes");
    cl.release_event(user);
  });

  section("kernel bundle from a native program, and its kernel", [&] {
    cl_device_id cd = sycl::get_native<sycl::backend::opencl>(dev);
    cl_int err = CL_SUCCESS;
    cl_program program = cl.create_program(cc, 1, &kSource, nullptr, &err);
    if (!check(err == CL_SUCCESS && program, "clCreateProgramWithSource")) return;
    err = cl.build_program(program, 1, &cd, "", nullptr, nullptr);
    if (!check(err == CL_SUCCESS, "clBuildProgram of OpenCL C")) return;
    cl_uint program_before = program_refs(program);
    {
      auto bundle = sycl::make_kernel_bundle<sycl::backend::opencl, sycl::bundle_state::executable>(program, ctx);
      check(bundle.get_devices().size() == 1 && bundle.get_devices()[0] == dev, "the bundle is for the device");
      auto natives = sycl::get_native<sycl::backend::opencl>(bundle);
      check(natives.size() == 1 && natives[0] == program, "get_native of the bundle is the cl_program");
      for (cl_program n : natives) cl.release_program(n);
    }
    check_eq(program_refs(program), program_before,
             "the program's reference count is back after the bundle goes");

    cl_kernel k = cl.create_kernel(program, "fill_index", &err);
    if (!check(err == CL_SUCCESS && k, "clCreateKernel")) return;
    cl_uint kernel_before = kernel_refs(k);
    {
      sycl::kernel kernel = sycl::make_kernel<sycl::backend::opencl>(k, ctx);
      cl_kernel native = sycl::get_native<sycl::backend::opencl>(kernel);
      check(native == k, "get_native of the made kernel is the cl_kernel");
      cl.release_kernel(native);
      auto *out = sycl::malloc_device<cl_uint>(kN, q);
      cl_uint base = 100;
      q.submit([&](sycl::handler &h) {
        h.set_arg(0, out);
        h.set_arg(1, base);
        h.parallel_for(sycl::range<1>{kN}, kernel);
      });
      std::vector<cl_uint> host(kN);
      q.memcpy(host.data(), out, kN * sizeof(cl_uint)).wait();
      size_t bad = kN;
      for (size_t i = 0; i < kN && bad == kN; ++i)
        if (host[i] != base + i) bad = i;
      check(bad == kN, "the native kernel launched through SYCL wrote every element",
            bad == kN ? "" : "element " + std::to_string(bad) + " is " + std::to_string(host[bad]));
      sycl::free(out, q);
    }
    check_eq(kernel_refs(k), kernel_before, "the kernel's reference count is back after the SYCL kernel goes");
    cl.release_kernel(k);
    cl.release_program(program);
  });

  cl.release_context(cc);
  return suite::summary();
}
