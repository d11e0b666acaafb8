//! The waPC host half, as `wasmtime-provider` 2.25 (policy-evaluator's
//! engine; `provider.rs`, `callbacks.rs`) implements it, on a wasmtime with
//! only cranelift, the runtime and parallel compilation (docs/runner.md). A
//! module is compiled and linked once ([`EnginePre`]); every
//! [`WapcEngine`] is a new store and instance whose start functions
//! (`_start`, `wapc_init`) run before the first call, and a trap in
//! `__guest_call` becomes the guest error. Unlike `wasmtime-provider`, a
//! pointer outside the guest's memory is a trap, not a host panic.
//!
//! With a deadline (`serve`'s policy timeout), the engine interrupts the
//! guest once its epoch has been incremented that many times since the
//! start function or the call began (wasmtime-provider's
//! `EpochDeadlines`, the same for `wapc_init` and calls, as
//! policy-evaluator sets them); whoever compiled the module increments the
//! epoch, once a second in policy-server.

use std::error::Error as StdError;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use wapc::{HOST_NAMESPACE, ModuleState, WebAssemblyEngineProvider, wapc_functions};
use wasmtime::{
    AsContextMut, Caller, Config, Engine, InstancePre, Linker, Memory, Module, Result, Store, Trap,
    TypedFunc, format_err,
};

use crate::host::wasi;

/// What one store holds: the waPC state of the host that owns the
/// instance (WASI preview 1 here keeps no state).
pub struct StoreData {
    host: Option<Arc<ModuleState>>,
}

/// wasmtime-provider's guest error when a call passed its deadline, which
/// policy-evaluator looks for.
pub const CALL_INTERRUPTED: &str = "guest code interrupted, execution deadline exceeded";

/// wasmtime-provider's text when a start function passed its deadline,
/// which policy-server looks for.
pub const INIT_INTERRUPTED: &str = "init interrupted, execution deadline exceeded";

/// A module compiled and linked once, ready for any number of instances.
#[derive(Clone)]
pub struct EnginePre {
    engine: Engine,
    instance_pre: InstancePre<StoreData>,
    deadline: Option<u64>,
}

impl EnginePre {
    /// Compiles a binary wasm module and links it against the waPC host
    /// functions and WASI preview 1; with a `deadline`, the guest is
    /// interrupted after that many epoch increments
    /// ([`EnginePre::increment_epoch`]).
    pub fn compile_with_deadline(bytes: &[u8], deadline: Option<u64>) -> Result<EnginePre> {
        // Config::default(), as wasmtime-provider's builder without a cache
        // (epoch interruption only with a deadline, so `run` and `bench`
        // pay no epoch checks). POLICY_RUNNER_SERIAL_COMPILATION: one compile
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
        config.epoch_interruption(deadline.is_some());
        let engine = Engine::new(&config)?;
        let module = Module::from_binary(&engine, bytes)?;
        let mut linker = Linker::new(&engine);
        add_wapc_to_linker(&mut linker)?;
        wasi::add_to_linker(&mut linker, &module)?;
        let instance_pre = linker.instantiate_pre(&module)?;
        Ok(EnginePre {
            engine,
            instance_pre,
            deadline,
        })
    }

    /// One tick of the clock the deadline counts.
    pub fn increment_epoch(&self) {
        self.engine.increment_epoch();
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
        self.arm_deadline();
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
                Err(e) if is_interrupt(&e) => {
                    return Err(format!("Initialization failed: {INIT_INTERRUPTED}").into());
                }
                Err(e) => return Err(format!("Initialization failed: {e}").into()),
            }
        }
        Ok(())
    }

    fn call(&mut self, op_length: i32, msg_length: i32) -> Result<i32, BoxError> {
        self.arm_deadline();
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
                let error = match is_interrupt(&e) {
                    true => CALL_INTERRUPTED.to_owned(),
                    false => e.to_string(),
                };
                self.store.data().host()?.set_guest_error(error);
                Ok(0)
            }
        }
    }

    fn replace(&mut self, _module: &[u8]) -> Result<(), BoxError> {
        Err("hot-swapping a module is not supported by policy-runner".into())
    }
}

impl WapcEngine {
    /// Restarts the deadline, if any, from the current epoch.
    fn arm_deadline(&mut self) {
        if let Some(deadline) = self.pre.deadline {
            self.store.set_epoch_deadline(deadline);
        }
    }
}

/// Whether `error` is the trap of a passed deadline.
fn is_interrupt(error: &wasmtime::Error) -> bool {
    error.downcast_ref::<Trap>() == Some(&Trap::Interrupt)
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
mod guest_trap_tests;
