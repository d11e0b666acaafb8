//! The engine against tiny hand-written guests: traps, start functions,
//! missing exports and deadlines.

use super::*;

/// A guest whose `wapc_init` exits with `code` (when given) and whose
/// every call answers with a buffer that ends past its one page.
fn guest(exit_code: Option<i32>) -> Vec<u8> {
    let init = exit_code.map_or(String::new(), |code| {
        format!(r#"(func (export "wapc_init") (call $exit (i32.const {code})))"#)
    });
    wat::parse_str(format!(
        r#"(module
          (import "wapc" "__guest_response" (func $respond (param i32 i32)))
          (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
          (memory (export "memory") 1)
          {init}
          (func (export "__guest_call") (param i32 i32) (result i32)
            (call $respond (i32.const 65530) (i32.const 64))
            (i32.const 1)))"#
    ))
    .unwrap()
}

fn host(module: &[u8]) -> Result<wapc::WapcHost, wapc::errors::Error> {
    let pre = EnginePre::compile_with_deadline(module, None).unwrap();
    wapc::WapcHost::new(Box::new(pre.rehydrate()), None)
}

#[test]
fn a_guest_buffer_outside_memory_is_a_guest_error_not_a_host_panic() {
    let host = host(&guest(None)).unwrap();
    // The trap's text, as wasmtime-provider passes it on, is wasmtime's
    // top-level message; the guest's call fails either way.
    let error = host.call("validate", b"{}").unwrap_err();
    assert!(
        matches!(error, wapc::errors::Error::GuestCallFailure(_)),
        "{error}"
    );
}

#[test]
fn exit_zero_in_wapc_init_is_a_successful_start_and_any_other_code_fails_it() {
    assert!(host(&guest(Some(0))).is_ok());
    let error = host(&guest(Some(1))).expect_err("exit code 1 fails");
    assert!(
        error.to_string().contains("Initialization failed"),
        "{error}"
    );
}

/// A guest whose `wapc_init` (with `in_init`) or every call loops forever.
fn looping_guest(in_init: bool) -> Vec<u8> {
    let init = match in_init {
        true => r#"(func (export "wapc_init") (loop $l (br $l)))"#,
        false => "",
    };
    wat::parse_str(format!(
        r#"(module
          (memory (export "memory") 1)
          {init}
          (func (export "__guest_call") (param i32 i32) (result i32)
            (loop $l (br $l))
            (i32.const 1)))"#
    ))
    .unwrap()
}

/// Ticks `pre`'s epoch every 10 ms until the returned flag is set.
fn ticking(pre: &EnginePre) -> Arc<std::sync::atomic::AtomicBool> {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (pre, done) = (pre.clone(), Arc::clone(&stop));
    std::thread::spawn(move || {
        while !done.load(Ordering::Relaxed) {
            std::thread::sleep(std::time::Duration::from_millis(10));
            pre.increment_epoch();
        }
    });
    stop
}

#[test]
fn a_deadline_interrupts_a_looping_call_and_a_looping_init_with_providers_texts() {
    let pre = EnginePre::compile_with_deadline(&looping_guest(false), Some(3)).unwrap();
    let stop = ticking(&pre);
    let host = wapc::WapcHost::new(Box::new(pre.rehydrate()), None).unwrap();
    let error = host.call("validate", b"{}").unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("Guest call failure: {CALL_INTERRUPTED}")
    );

    let pre = EnginePre::compile_with_deadline(&looping_guest(true), Some(3)).unwrap();
    let stop_init = ticking(&pre);
    let error = wapc::WapcHost::new(Box::new(pre.rehydrate()), None)
        .expect_err("the start function is interrupted");
    assert!(error.to_string().contains(INIT_INTERRUPTED), "{error}");
    stop.store(true, Ordering::Relaxed);
    stop_init.store(true, Ordering::Relaxed);
}

#[test]
fn a_module_without_guest_call_is_refused() {
    let module = wat::parse_str(r#"(module (memory (export "memory") 1))"#).unwrap();
    let error = host(&module).expect_err("no __guest_call");
    assert!(error.to_string().contains("__guest_call"), "{error}");
}
