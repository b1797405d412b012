// OpenCL C kernels of the program and kernel conformance cases
// (conformance/src/cases/program.rs, kernel.rs). The cases compile this file
// to SPIR-V at run time with clang and llvm-spirv.

// out[i] = base + i: a value argument and a USM pointer argument.
kernel void fill_index(global uint *out, uint base) {
    size_t i = get_global_id(0);
    out[i] = base + (uint)i;
}

// out[i] = in[i] * factor + 1, staged through work-group local memory so that
// a local argument and a barrier take part.
kernel void scale_add(global const uint *in, global uint *out, uint factor, local uint *scratch) {
    size_t i = get_global_id(0);
    size_t l = get_local_id(0);
    scratch[l] = in[i] * factor;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[i] = scratch[(get_local_size(0) - 1) - l] + 1;
}
