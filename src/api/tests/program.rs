//! `urProgram*`.

use super::*;

fn props(count: u32, metadata: *const ur_program_metadata_t) -> ur_program_properties_t {
    ur_program_properties_t { stype: UR_STRUCTURE_TYPE_PROGRAM_PROPERTIES, pNext: null_mut(), count, pMetadatas: metadata }
}

fn metadata() -> ur_program_metadata_t {
    ur_program_metadata_t { pName: c"m".as_ptr(), r#type: ur_program_metadata_type_t(0), size: 4, value: ur_program_metadata_value_t { data32: 1 } }
}

const IL: &[u8] = b"il";

fn with_il(w: &World, il: *const c_void, length: usize, p: *const ur_program_properties_t) -> ur_result_t {
    with_out(|h| ur!(Program.pfnCreateWithIL(w.ctx, il, length, p, h)))
}

static IMAGE: [u8; 3] = [1, 2, 3];

/// `urProgramCreateWithBinary` in `w.ctx` of `IMAGE` for each device given.
fn with_binary(w: &World, devices: &[ur_device_handle_t], p: *const ur_program_properties_t) -> ur_result_t {
    let mut devices = devices.to_vec();
    let mut lengths = vec![IMAGE.len(); devices.len()];
    let mut binaries = vec![IMAGE.as_ptr(); devices.len()];
    let n = devices.len() as u32;
    with_out(|h| ur!(Program.pfnCreateWithBinary(w.ctx, n, devices.as_mut_ptr(), lengths.as_mut_ptr(), binaries.as_mut_ptr(), p, h)))
}

/// A program of `ctx` (over both devices) with an image for `dev[0]` only.
fn dev0_only(w: &World, ctx: ur_context_handle_t) -> ur_program_handle_t {
    let (mut d, mut len, mut bin) = ([w.dev[0]], [3usize], [IMAGE.as_ptr()]);
    let mut h = null_mut();
    let code = ur!(Program.pfnCreateWithBinary(ctx, 1, d.as_mut_ptr(), len.as_mut_ptr(), bin.as_mut_ptr(), null(), &mut h));
    assert_eq!(code, UR_RESULT_SUCCESS);
    take_calls();
    h
}

fn build_exp(program: ur_program_handle_t, devices: &[ur_device_handle_t], flags: ur_exp_program_flags_t) -> ur_result_t {
    let mut devices = devices.to_vec();
    ur!(ProgramExp.pfnBuildExp(program, devices.len() as u32, devices.as_mut_ptr(), flags, null()))
}

fn link_exp(w: &World, devices: &[ur_device_handle_t], flags: ur_exp_program_flags_t, programs: &[ur_program_handle_t]) -> ur_result_t {
    let mut devices = devices.to_vec();
    let (n, p) = (programs.len() as u32, programs.as_ptr());
    with_out(|out| ur!(ProgramExp.pfnLinkExp(w.ctx, devices.len() as u32, devices.as_mut_ptr(), flags, n, p, null(), out)))
}

fn spec_constants(program: ur_program_handle_t, constants: &[ur_specialization_constant_info_t]) -> ur_result_t {
    ur!(Program.pfnSetSpecializationConstants(program, constants.len() as u32, constants.as_ptr()))
}

static VALUE: u64 = 5;

fn constant(id: u32, size: usize, value: *const c_void) -> ur_specialization_constant_info_t {
    ur_specialization_constant_info_t { id, size, pValue: value }
}

const NULL: ur_result_t = UR_RESULT_ERROR_INVALID_NULL_POINTER;
const NULL_HANDLE: ur_result_t = UR_RESULT_ERROR_INVALID_NULL_HANDLE;

refusals! {
    il_null_context: NULL_HANDLE, |w| with_out(|h| ur!(Program.pfnCreateWithIL(null_mut(), IL.as_ptr().cast(), 2, null(), h)));
    il_no_il: NULL, |w| with_il(&w, null(), 2, null());
    il_no_output: NULL, |w| ur!(Program.pfnCreateWithIL(w.ctx, IL.as_ptr().cast(), 2, null(), null_mut()));
    il_metadata_count_without_array: NULL, |w| with_il(&w, IL.as_ptr().cast(), 2, &props(1, null()));
    il_metadata_array_without_count: UR_RESULT_ERROR_INVALID_SIZE, |w| with_il(&w, IL.as_ptr().cast(), 2, &props(0, &metadata()));
    il_length_zero: UR_RESULT_ERROR_INVALID_SIZE, |w| with_il(&w, IL.as_ptr().cast(), 0, null());

    binary_null_context: NULL_HANDLE, |w| {
        let (mut d, mut len, mut bin) = ([w.dev[0]], [3usize], [IMAGE.as_ptr()]);
        with_out(|h| ur!(Program.pfnCreateWithBinary(null_mut(), 1, d.as_mut_ptr(), len.as_mut_ptr(), bin.as_mut_ptr(), null(), h)))
    };
    binary_no_devices: NULL, |w| {
        let (mut len, mut bin) = ([3usize], [IMAGE.as_ptr()]);
        with_out(|h| ur!(Program.pfnCreateWithBinary(w.ctx, 1, null_mut(), len.as_mut_ptr(), bin.as_mut_ptr(), null(), h)))
    };
    binary_no_lengths: NULL, |w| {
        let (mut d, mut bin) = ([w.dev[0]], [IMAGE.as_ptr()]);
        with_out(|h| ur!(Program.pfnCreateWithBinary(w.ctx, 1, d.as_mut_ptr(), null_mut(), bin.as_mut_ptr(), null(), h)))
    };
    binary_no_binaries: NULL, |w| {
        let (mut d, mut len) = ([w.dev[0]], [3usize]);
        with_out(|h| ur!(Program.pfnCreateWithBinary(w.ctx, 1, d.as_mut_ptr(), len.as_mut_ptr(), null_mut(), null(), h)))
    };
    binary_no_output: NULL, |w| {
        let (mut d, mut len, mut bin) = ([w.dev[0]], [3usize], [IMAGE.as_ptr()]);
        ur!(Program.pfnCreateWithBinary(w.ctx, 1, d.as_mut_ptr(), len.as_mut_ptr(), bin.as_mut_ptr(), null(), null_mut()))
    };
    binary_metadata_count_without_array: NULL, |w| with_binary(&w, &[w.dev[0]], &props(2, null()));
    binary_no_device: UR_RESULT_ERROR_INVALID_SIZE, |w| with_binary(&w, &[], null());
    binary_null_device: NULL_HANDLE, |w| with_binary(&w, &[null_mut()], null());
    binary_device_not_in_context: UR_RESULT_ERROR_INVALID_DEVICE, |w| with_binary(&w, &[w.dev[0], w.dev[1]], null());
    binary_null_image: NULL, |w| {
        let (mut d, mut len, mut bin) = ([w.dev[0]], [3usize], [null()]);
        with_out(|h| ur!(Program.pfnCreateWithBinary(w.ctx, 1, d.as_mut_ptr(), len.as_mut_ptr(), bin.as_mut_ptr(), null(), h)))
    };
    binary_empty_image: UR_RESULT_ERROR_INVALID_NATIVE_BINARY, |w| {
        let (mut d, mut len, mut bin) = ([w.dev[0]], [0usize], [IMAGE.as_ptr()]);
        with_out(|h| ur!(Program.pfnCreateWithBinary(w.ctx, 1, d.as_mut_ptr(), len.as_mut_ptr(), bin.as_mut_ptr(), null(), h)))
    };

    build_null_context: NULL_HANDLE, |w| ur!(Program.pfnBuild(null_mut(), w.program(), null()));
    build_null_program: NULL_HANDLE, |w| ur!(Program.pfnBuild(w.ctx, null_mut(), null()));
    build_program_of_another_context: UR_RESULT_ERROR_INVALID_CONTEXT, |w| {
        ur!(Program.pfnBuild(w.ctx, w.program_in(w.context2()), null()))
    };
    compile_a_kernel_for_a_program: UR_RESULT_ERROR_INVALID_PROGRAM, |w| ur!(Program.pfnCompile(w.ctx, as_handle(w.kernel()), null()));
    compile_program_of_another_context: UR_RESULT_ERROR_INVALID_CONTEXT, |w| {
        ur!(Program.pfnCompile(w.ctx, w.program_in(w.context2()), null()))
    };

    link_null_context: NULL_HANDLE, |w| {
        let list = [w.program()];
        with_out(|out| ur!(Program.pfnLink(null_mut(), 1, list.as_ptr(), null(), out)))
    };
    link_no_programs: NULL, |w| with_out(|out| ur!(Program.pfnLink(w.ctx, 1, null(), null(), out)));
    link_no_output: NULL, |w| {
        let list = [w.program()];
        ur!(Program.pfnLink(w.ctx, 1, list.as_ptr(), null(), null_mut()))
    };
    link_null_program: NULL_HANDLE, |w| {
        let list = [w.program(), null_mut()];
        with_out(|out| ur!(Program.pfnLink(w.ctx, 2, list.as_ptr(), null(), out)))
    };
    link_foreign_program: UR_RESULT_ERROR_INVALID_PROGRAM, |w| {
        let other = Foreign::new(ObjectKind::Program);
        let list = [other.handle()];
        with_out(|out| ur!(Program.pfnLink(w.ctx, 1, list.as_ptr(), null(), out)))
    };

    build_exp_null_program: NULL_HANDLE, |w| build_exp(null_mut(), &[w.dev[0]], 0);
    build_exp_no_devices: NULL, |w| ur!(ProgramExp.pfnBuildExp(w.program(), 1, null_mut(), 0, null()));
    build_exp_unknown_flag: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| build_exp(w.program(), &[w.dev[0]], 1 << 1);
    build_exp_no_device: UR_RESULT_ERROR_INVALID_SIZE, |w| build_exp(w.program(), &[], 0);
    build_exp_device_not_in_context: UR_RESULT_ERROR_INVALID_DEVICE, |w| build_exp(w.program(), &[w.dev[1]], 0);
    build_exp_device_without_an_image: UR_RESULT_ERROR_INVALID_DEVICE, |w| {
        build_exp(dev0_only(&w, w.context2()), &[w.dev[0], w.dev[1]], 0)
    };
    compile_exp_device_without_an_image: UR_RESULT_ERROR_INVALID_DEVICE, |w| {
        let mut d = [w.dev[1]];
        ur!(ProgramExp.pfnCompileExp(dev0_only(&w, w.context2()), 1, d.as_mut_ptr(), 0, null()))
    };
    compile_exp_unknown_flag: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        let mut d = [w.dev[0]];
        ur!(ProgramExp.pfnCompileExp(w.program(), 1, d.as_mut_ptr(), 1 << 1, null()))
    };

    link_exp_null_context: NULL_HANDLE, |w| {
        let (mut d, list) = ([w.dev[0]], [w.program()]);
        with_out(|out| ur!(ProgramExp.pfnLinkExp(null_mut(), 1, d.as_mut_ptr(), 0, 1, list.as_ptr(), null(), out)))
    };
    link_exp_no_devices: NULL, |w| {
        let list = [w.program()];
        with_out(|out| ur!(ProgramExp.pfnLinkExp(w.ctx, 1, null_mut(), 0, 1, list.as_ptr(), null(), out)))
    };
    link_exp_unknown_flag: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| link_exp(&w, &[w.dev[0]], 1 << 1, &[w.program()]);
    link_exp_no_device: UR_RESULT_ERROR_INVALID_SIZE, |w| link_exp(&w, &[], 0, &[w.program()]);
    link_exp_device_not_in_context: UR_RESULT_ERROR_INVALID_DEVICE, |w| link_exp(&w, &[w.dev[1]], 0, &[w.program()]);
    link_exp_no_program: UR_RESULT_ERROR_INVALID_SIZE, |w| link_exp(&w, &[w.dev[0]], 0, &[]);

    retain_null: NULL_HANDLE, |w| ur!(Program.pfnRetain(null_mut()));
    release_a_kernel: UR_RESULT_ERROR_INVALID_PROGRAM, |w| ur!(Program.pfnRelease(as_handle(w.kernel())));
    info_null: NULL_HANDLE, |w| with_out(|n| ur!(Program.pfnGetInfo(null_mut(), UR_PROGRAM_INFO_NUM_DEVICES, 0, null_mut(), n)));
    build_info_null_device: NULL_HANDLE, |w| {
        with_out(|n| ur!(Program.pfnGetBuildInfo(w.program(), null_mut(), UR_PROGRAM_BUILD_INFO_STATUS, 0, null_mut(), n)))
    };
    build_info_null_program: NULL_HANDLE, |w| {
        with_out(|n| ur!(Program.pfnGetBuildInfo(null_mut(), w.dev[0], UR_PROGRAM_BUILD_INFO_STATUS, 0, null_mut(), n)))
    };

    spec_constants_null_program: NULL_HANDLE, |w| spec_constants(null_mut(), &[constant(1, 8, (&VALUE as *const u64).cast())]);
    spec_constants_no_array: NULL, |w| ur!(Program.pfnSetSpecializationConstants(w.program(), 1, null()));
    spec_constants_count_zero: UR_RESULT_ERROR_INVALID_SIZE, |w| {
        let c = [constant(1, 8, (&VALUE as *const u64).cast())];
        ur!(Program.pfnSetSpecializationConstants(w.program(), 0, c.as_ptr()))
    };
    spec_constants_null_value: NULL, |w| {
        spec_constants(w.program(), &[constant(1, 8, (&VALUE as *const u64).cast()), constant(2, 8, null())])
    };

    global_null_device: NULL_HANDLE, |w| {
        with_out(|p| ur!(Program.pfnGetGlobalVariablePointer(null_mut(), w.program(), c"global".as_ptr(), null_mut(), p)))
    };
    global_null_program: NULL_HANDLE, |w| {
        with_out(|p| ur!(Program.pfnGetGlobalVariablePointer(w.dev[0], null_mut(), c"global".as_ptr(), null_mut(), p)))
    };
    global_no_name: NULL, |w| with_out(|p| ur!(Program.pfnGetGlobalVariablePointer(w.dev[0], w.program(), null(), null_mut(), p)));
    global_no_output: NULL, |w| {
        ur!(Program.pfnGetGlobalVariablePointer(w.dev[0], w.program(), c"global".as_ptr(), null_mut(), null_mut()))
    };

}

#[test]
fn creation_hands_the_images_to_the_backend() {
    let w = World::new();
    let m = [metadata()];
    let calls = reached!(UR_RESULT_SUCCESS, with_il(&w, IL.as_ptr().cast(), 2, &props(1, m.as_ptr())));
    assert_eq!(only(&calls, "program.create_with_il"), format!("{IL:?}"));
    let ctx = w.context2();
    let (mut d, mut len, mut bin) = ([w.dev[1], w.dev[0]], [3usize, 2], [IMAGE.as_ptr(), IMAGE.as_ptr()]);
    let mut h = null_mut();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Program.pfnCreateWithBinary(ctx, 2, d.as_mut_ptr(), len.as_mut_ptr(), bin.as_mut_ptr(), null(), &mut h)));
    assert_eq!(only(&calls, "program.create_with_binary"), "[(dev1, [1, 2, 3]), (dev0, [1, 2])]");
}

#[test]
fn build_and_compile_pass_the_options() {
    let w = World::new();
    let p = w.program();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Program.pfnBuild(w.ctx, p, null())));
    assert_eq!(only(&calls, "program.build"), r#"[] """#);
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Program.pfnCompile(w.ctx, p, c"-O2".as_ptr())));
    assert_eq!(only(&calls, "program.compile"), r#"[] "-O2""#);
    let calls = reached!(UR_RESULT_SUCCESS, build_exp(p, &[w.dev[0]], 0));
    assert_eq!(only(&calls, "program.build"), r#"[dev0] """#);
    let mut d = [w.dev[0]];
    let calls = reached!(UR_RESULT_SUCCESS, ur!(ProgramExp.pfnCompileExp(p, 1, d.as_mut_ptr(), 0, c"-g".as_ptr())));
    assert_eq!(only(&calls, "program.compile"), r#"[dev0] "-g""#);
}

#[test]
fn link_nulls_the_output_first_and_keeps_a_failed_links_log() {
    let w = World::new();
    let list = [w.program(), w.program()];
    let mut out = 1usize as ur_program_handle_t;
    refused!(UR_RESULT_ERROR_INVALID_SIZE, ur!(Program.pfnLink(w.ctx, 0, list.as_ptr(), null(), &mut out)));
    assert!(out.is_null());
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Program.pfnLink(w.ctx, 2, list.as_ptr(), c"-x".as_ptr(), &mut out)));
    assert_eq!(only(&calls, "program.link"), format!(r#"[] {list:?} "-x""#));
    assert!(!out.is_null());
    let mut failed = null_mut();
    let fail = crate::test_backend::program::FAILING_LINK.as_ptr();
    reached!(UR_RESULT_ERROR_PROGRAM_LINK_FAILURE, ur!(Program.pfnLink(w.ctx, 1, list.as_ptr(), fail, &mut failed)));
    assert!(!failed.is_null(), "the program holding the log is handed out");
    refused!(UR_RESULT_SUCCESS, ur!(Program.pfnRelease(failed)));
    let calls = reached!(UR_RESULT_SUCCESS, link_exp(&w, &[w.dev[0]], 0, &list[..1]));
    assert_eq!(only(&calls, "program.link"), format!(r#"[dev0] {:?} """#, &list[..1]));
}

#[test]
fn info_binaries_fill_the_callers_buffers() {
    let w = World::new();
    let p = dev0_only(&w, w.ctx);
    let mut sizes = [0usize; 1];
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Program.pfnGetInfo(p, UR_PROGRAM_INFO_BINARY_SIZES, 8, sizes.as_mut_ptr().cast(), null_mut())));
    assert_eq!(only(&calls, "program.info"), format!("{UR_PROGRAM_INFO_BINARY_SIZES:?}"));
    assert_eq!(sizes, [3]);
    let mut image = [0u8; 3];
    let mut buffers = [image.as_mut_ptr()];
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Program.pfnGetInfo(p, UR_PROGRAM_INFO_BINARIES, 8, buffers.as_mut_ptr().cast(), null_mut())));
    assert_eq!(methods(&calls), ["program.binaries"]);
    assert_eq!(image, IMAGE);
    let mut refs = 0u32;
    refused!(UR_RESULT_SUCCESS, ur!(Program.pfnGetInfo(p, UR_PROGRAM_INFO_REFERENCE_COUNT, 4, (&mut refs as *mut u32).cast(), null_mut())));
    assert_eq!(refs, 1);
    let mut ctx = null_mut::<c_void>();
    refused!(UR_RESULT_SUCCESS, ur!(Program.pfnGetInfo(p, UR_PROGRAM_INFO_CONTEXT, 8, (&mut ctx as *mut *mut c_void).cast(), null_mut())));
    assert_eq!(ctx, w.ctx.cast());
    refused!(UR_RESULT_SUCCESS, ur!(Program.pfnRelease(p)));
    refused!(UR_RESULT_ERROR_INVALID_PROGRAM, ur!(Program.pfnRelease(p)));
}

#[test]
fn build_info_reaches_the_backend() {
    let w = World::new();
    let mut status = ur_program_build_status_t(0);
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Program.pfnGetBuildInfo(w.program(), w.dev[0], UR_PROGRAM_BUILD_INFO_STATUS, 4, (&mut status as *mut ur_program_build_status_t).cast(), null_mut())));
    assert_eq!(only(&calls, "program.build_info"), format!("dev0 {UR_PROGRAM_BUILD_INFO_STATUS:?}"));
    assert_eq!(status, UR_PROGRAM_BUILD_STATUS_SUCCESS);
}

#[test]
fn spec_constants_reach_the_backend() {
    let w = World::new();
    let v = (&VALUE as *const u64).cast();
    let calls = reached!(UR_RESULT_SUCCESS, spec_constants(w.program(), &[constant(1, 4, v), constant(2, 8, v)]));
    assert_eq!(only(&calls, "program.set_specialization_constants"), "[(1, 4), (2, 8)]");
}

#[test]
fn global_variable_pointer_and_size() {
    let w = World::new();
    let (mut p, mut size) = (null_mut(), 0usize);
    let prog = w.program();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Program.pfnGetGlobalVariablePointer(w.dev[0], prog, c"global".as_ptr(), &mut size, &mut p)));
    assert_eq!(only(&calls, "program.global_variable"), r#"dev0 "global""#);
    assert!(!p.is_null());
    assert_eq!(size, 8);
    reached!(UR_RESULT_SUCCESS, ur!(Program.pfnGetGlobalVariablePointer(w.dev[0], prog, c"global".as_ptr(), null_mut(), &mut p)));
    reached!(UR_RESULT_ERROR_INVALID_VALUE, ur!(Program.pfnGetGlobalVariablePointer(w.dev[0], prog, c"other".as_ptr(), null_mut(), &mut p)));
}

#[test]
fn native_handle_round_trip_decodes_ownership() {
    let w = World::new();
    let native = native_of("program.native_handle", |n| ur!(Program.pfnGetNativeHandle(w.program(), n)));
    let p = ur_program_native_properties_t { stype: UR_STRUCTURE_TYPE_PROGRAM_NATIVE_PROPERTIES, pNext: null_mut(), isNativeHandleOwned: true };
    let mut h = null_mut();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Program.pfnCreateWithNativeHandle(native, w.ctx, &p, &mut h)));
    assert_eq!(only(&calls, "program.from_native"), format!("{native:#x} Owned"));
    assert!(!h.is_null());
}
