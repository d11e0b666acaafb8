//! The waPC host half, as `wasmtime-provider` 2.25 (policy-evaluator's
//! engine; `provider.rs`, `callbacks.rs`) implements it, on a wasmtime with
//! only cranelift, the runtime and parallel compilation (README, "A trimmed
//! host"). A module is compiled and linked once ([`EnginePre`]); every
//! [`WapcEngine`] is a new store and instance whose start functions
//! (`_start`, `wapc_init`) run before the first call, and a trap in
//! `__guest_call` becomes the guest error. Unlike `wasmtime-provider`, a
//! pointer outside the guest's memory is a trap, not a host panic.

use std::error::Error as StdError;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use wapc::{HOST_NAMESPACE, ModuleState, WebAssemblyEngineProvider, wapc_functions};
use wasmtime::{
    AsContextMut, Caller, Config, Engine, InstancePre, Linker, Memory, Module, Result, Store,
    TypedFunc, format_err,
};

use crate::host::wasi;

/// What one store holds: the waPC state of the host that owns the
/// instance (WASI preview 1 here keeps no state).
pub struct StoreData {
    host: Option<Arc<ModuleState>>,
}

/// A module compiled and linked once, ready for any number of instances.
#[derive(Clone)]
pub struct EnginePre {
    engine: Engine,
    instance_pre: InstancePre<StoreData>,
}

impl EnginePre {
    /// Compiles a binary wasm module and links it against the waPC host
    /// functions and WASI preview 1.
    pub fn compile(bytes: &[u8]) -> Result<EnginePre> {
        // Config::default(), as wasmtime-provider's builder without a cache
        // or epoch deadlines. POLICY_RUNNER_SERIAL_COMPILATION: one compile
        // thread, for counting instructions (scripts/bench-compare.sh): under
        // callgrind's serialised scheduling, idle compile threads spinning
        // for work blurred the per-evaluation counts by up to 2x.
        let mut config = Config::default();
        if std::env::var_os("POLICY_RUNNER_SERIAL_COMPILATION").is_some() {
            config.parallel_compilation(false);
        }
        // POLICY_RUNNER_PERFMAP: name the compiled guest functions in
        // /tmp/perf-<pid>.map, so a profile of the runner (perf, or
        // scripts/wasm-profile.py over callgrind) can say which of the
        // module's functions the instructions went to.
        if std::env::var_os("POLICY_RUNNER_PERFMAP").is_some() {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = Engine::new(&config)?;
        let module = Module::from_binary(&engine, bytes)?;
        let mut linker = Linker::new(&engine);
        add_wapc_to_linker(&mut linker)?;
        wasi::add_to_linker(&mut linker, &module)?;
        let instance_pre = linker.instantiate_pre(&module)?;
        Ok(EnginePre {
            engine,
            instance_pre,
        })
    }

    /// A fresh store for one instance; the instance itself is created when
    /// `wapc::WapcHost::new` calls [`WebAssemblyEngineProvider::init`].
    pub fn rehydrate(&self) -> WapcEngine {
        WapcEngine {
            pre: self.clone(),
            store: Store::new(&self.engine, StoreData { host: None }),
            guest_call: None,
            memory: None,
            memory_bytes: Arc::default(),
        }
    }
}

impl StoreData {
    fn host(&self) -> Result<&Arc<ModuleState>> {
        self.host
            .as_ref()
            .ok_or_else(|| format_err!("host should have been set during the init"))
    }
}

/// One instance of an [`EnginePre`], driven by a `wapc::WapcHost`.
pub struct WapcEngine {
    pre: EnginePre,
    store: Store<StoreData>,
    guest_call: Option<TypedFunc<(i32, i32), i32>>,
    memory: Option<Memory>,
    memory_bytes: Arc<AtomicUsize>,
}

impl WapcEngine {
    /// The size of the guest's linear memory after its latest call, shared
    /// with whoever holds the instance (`wapc::WapcHost` owns the engine):
    /// how the benchmark shows that a reused instance does not grow.
    pub fn memory_bytes(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.memory_bytes)
    }
}

type BoxError = Box<dyn StdError + Send + Sync + 'static>;

impl WebAssemblyEngineProvider for WapcEngine {
    fn init(&mut self, host: Arc<ModuleState>) -> Result<(), BoxError> {
        self.store = Store::new(&self.pre.engine, StoreData { host: Some(host) });
        let instance = self.pre.instance_pre.instantiate(&mut self.store)?;
        let guest_call = instance
            .get_typed_func::<(i32, i32), i32>(&mut self.store, wapc_functions::GUEST_CALL)
            .map_err(|_| {
                format_err!("Guest call function (__guest_call) not exported by wasm module.")
            })?;
        self.guest_call = Some(guest_call);
        self.memory = instance.get_memory(&mut self.store, "memory");
        for start in wapc_functions::REQUIRED_STARTS {
            if instance.get_export(&mut self.store, start).is_none() {
                continue;
            }
            let start_fn: TypedFunc<(), ()> = instance.get_typed_func(&mut self.store, start)?;
            match start_fn.call(&mut self.store, ()) {
                Ok(()) => {}
                // A WASI program's `main` may end with proc_exit(0) (TinyGo
                // >= 0.35 does): a successful exit, as wasmtime-provider
                // treats it.
                Err(e) if e.downcast_ref::<wasi::Exit>().is_some_and(|x| x.0 == 0) => {}
                Err(e) => return Err(format!("Initialization failed: {e}").into()),
            }
        }
        Ok(())
    }

    fn call(&mut self, op_length: i32, msg_length: i32) -> Result<i32, BoxError> {
        let guest_call = self
            .guest_call
            .as_ref()
            .ok_or("the instance was not initialised")?;
        let result = guest_call.call(&mut self.store, (op_length, msg_length));
        if let Some(memory) = self.memory {
            let size = memory.data_size(&self.store);
            self.memory_bytes.store(size, Ordering::Relaxed);
        }
        match result {
            Ok(result) => Ok(result),
            // A trap is the guest's failure, reported through waPC's guest
            // error, as wasmtime-provider does.
            Err(e) => {
                self.store.data().host()?.set_guest_error(e.to_string());
                Ok(0)
            }
        }
    }

    fn replace(&mut self, _module: &[u8]) -> Result<(), BoxError> {
        Err("hot-swapping a module is not supported by policy-runner".into())
    }
}

/// The guest's exported linear memory, which every waPC buffer lives in.
fn memory(caller: &mut Caller<'_, StoreData>) -> Result<Memory> {
    wasi::memory(caller).ok_or_else(|| format_err!("the guest module exports no memory"))
}

/// A copy of `len` bytes of guest memory at `ptr`; out of bounds is a trap.
fn read(caller: &mut Caller<'_, StoreData>, ptr: i32, len: i32) -> Result<Vec<u8>> {
    let memory = memory(caller)?;
    let data = memory.data(&caller);
    let start = ptr as u32 as usize;
    start
        .checked_add(len as u32 as usize)
        .and_then(|end| data.get(start..end))
        .map(<[u8]>::to_vec)
        .ok_or_else(|| format_err!("guest buffer {ptr}+{len} is outside its memory"))
}

fn read_str(caller: &mut Caller<'_, StoreData>, ptr: i32, len: i32, what: &str) -> Result<String> {
    String::from_utf8(read(caller, ptr, len)?)
        .map_err(|e| format_err!("{what}: cannot convert to UTF8: {e}"))
}

fn write(caller: &mut Caller<'_, StoreData>, ptr: i32, bytes: &[u8]) -> Result<()> {
    let memory = memory(caller)?;
    memory
        .write(caller.as_context_mut(), ptr as u32 as usize, bytes)
        .map_err(|e| format_err!("{e}"))
}

/// The waPC host functions (`wapc` import module), as wasmtime-provider's
/// `callbacks.rs` registers them.
fn add_wapc_to_linker(linker: &mut Linker<StoreData>) -> Result<()> {
    linker.func_wrap(
        HOST_NAMESPACE,
        wapc_functions::GUEST_REQUEST_FN,
        |mut caller: Caller<'_, StoreData>, op_ptr: i32, ptr: i32| -> Result<()> {
            if let Some(invocation) = caller.data().host()?.get_guest_request() {
                write(&mut caller, ptr, &invocation.msg)?;
                write(&mut caller, op_ptr, invocation.operation.as_bytes())?;
            }
            Ok(())
        },
    )?;
    linker.func_wrap(
        HOST_NAMESPACE,
        wapc_functions::HOST_CONSOLE_LOG,
        |mut caller: Caller<'_, StoreData>, ptr: i32, len: i32| -> Result<()> {
            let msg = read_str(&mut caller, ptr, len, "console_log")?;
            caller.data().host()?.do_console_log(&msg);
            Ok(())
        },
    )?;
    linker.func_wrap(
        HOST_NAMESPACE,
        wapc_functions::HOST_CALL,
        |mut caller: Caller<'_, StoreData>,
         bd_ptr: i32,
         bd_len: i32,
         ns_ptr: i32,
         ns_len: i32,
         op_ptr: i32,
         op_len: i32,
         ptr: i32,
         len: i32|
         -> Result<i32> {
            let binding = read_str(&mut caller, bd_ptr, bd_len, "host_call binding")?;
            let namespace = read_str(&mut caller, ns_ptr, ns_len, "host_call namespace")?;
            let operation = read_str(&mut caller, op_ptr, op_len, "host_call operation")?;
            let payload = read(&mut caller, ptr, len)?;
            let host = caller.data().host()?;
            Ok(host
                .do_host_call(&binding, &namespace, &operation, &payload)
                .unwrap_or(0))
        },
    )?;
    linker.func_wrap(
        HOST_NAMESPACE,
        wapc_functions::HOST_RESPONSE_FN,
        |mut caller: Caller<'_, StoreData>, ptr: i32| -> Result<()> {
            let host = Arc::clone(caller.data().host()?);
            host.with_host_response(|bytes| write(&mut caller, ptr, bytes))
                .unwrap_or(Ok(()))
        },
    )?;
    linker.func_wrap(
        HOST_NAMESPACE,
        wapc_functions::HOST_RESPONSE_LEN_FN,
        |caller: Caller<'_, StoreData>| -> Result<i32> {
            Ok(caller.data().host()?.host_response_len() as i32)
        },
    )?;
    linker.func_wrap(
        HOST_NAMESPACE,
        wapc_functions::GUEST_RESPONSE_FN,
        |mut caller: Caller<'_, StoreData>, ptr: i32, len: i32| -> Result<()> {
            let response = read(&mut caller, ptr, len)?;
            caller.data().host()?.set_guest_response(response);
            Ok(())
        },
    )?;
    linker.func_wrap(
        HOST_NAMESPACE,
        wapc_functions::GUEST_ERROR_FN,
        |mut caller: Caller<'_, StoreData>, ptr: i32, len: i32| -> Result<()> {
            let message = read_str(&mut caller, ptr, len, "guest_error")?;
            caller.data().host()?.set_guest_error(message);
            Ok(())
        },
    )?;
    linker.func_wrap(
        HOST_NAMESPACE,
        wapc_functions::HOST_ERROR_FN,
        |mut caller: Caller<'_, StoreData>, ptr: i32| -> Result<()> {
            if let Some(error) = caller.data().host()?.get_host_error() {
                write(&mut caller, ptr, error.as_bytes())?;
            }
            Ok(())
        },
    )?;
    linker.func_wrap(
        HOST_NAMESPACE,
        wapc_functions::HOST_ERROR_LEN_FN,
        |caller: Caller<'_, StoreData>| -> Result<i32> {
            let host = caller.data().host()?;
            Ok(host.get_host_error().map_or(0, |e| e.len()) as i32)
        },
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
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
        let pre = EnginePre::compile(module).unwrap();
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

    #[test]
    fn a_module_without_guest_call_is_refused() {
        let module = wat::parse_str(r#"(module (memory (export "memory") 1))"#).unwrap();
        let error = host(&module).expect_err("no __guest_call");
        assert!(error.to_string().contains("__guest_call"), "{error}");
    }
}
