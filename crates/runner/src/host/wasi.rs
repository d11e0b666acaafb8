//! WASI preview 1 as policy-server gives it to a waPC policy
//! (wasmtime-provider `wasi.rs`, `WasiParams::default()`): inherited stdout
//! and stderr, no arguments, environment or preopened directories, the
//! clocks and the host's randomness. `wasmtime-wasi` would bring the
//! component model and async support; a policy reaches only a handful of
//! functions, implemented here, and any other import is a stub answering
//! `ENOSYS`, as a sandbox without files, sockets or processes does.

use std::io::{Read, Write};
use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use thiserror::Error;
use wasmtime::{
    Caller, Extern, ExternType, Linker, Memory, Module, Result, Val, ValType, format_err,
};

const MODULES: [&str; 2] = ["wasi_snapshot_preview1", "wasi_unstable"];

/// WASI errno values (preview 1 `errno`).
mod errno {
    pub const SUCCESS: i32 = 0;
    pub const BADF: i32 = 8;
    pub const FAULT: i32 = 21;
    pub const INVAL: i32 = 28;
    pub const IO: i32 = 29;
    pub const NOSYS: i32 = 52;
}

/// The guest called `proc_exit` with this code: the instance is over.
#[derive(Debug, Error)]
#[error("guest exited with code {0}")]
pub struct Exit(pub i32);

/// Links WASI preview 1 into `linker` for `module`'s imports.
pub fn add_to_linker<T: Send + 'static>(linker: &mut Linker<T>, module: &Module) -> Result<()> {
    for name in MODULES {
        add_module(linker, name)?;
    }
    // Functions this host does not implement: ENOSYS, typed as the module
    // imports them.
    for import in module.imports() {
        let ExternType::Func(ty) = import.ty() else {
            continue;
        };
        if !MODULES.contains(&import.module()) || IMPLEMENTED.contains(&import.name()) {
            continue;
        }
        let name = import.name().to_owned();
        let returns_errno = matches!(ty.results().collect::<Vec<_>>()[..], [ValType::I32]);
        linker.func_new(import.module(), import.name(), ty, move |_, _, results| {
            if returns_errno {
                results[0] = Val::I32(errno::NOSYS);
                Ok(())
            } else {
                Err(format_err!("WASI function {name} is not supported"))
            }
        })?;
    }
    Ok(())
}

const IMPLEMENTED: [&str; 12] = [
    "args_get",
    "args_sizes_get",
    "environ_get",
    "environ_sizes_get",
    "clock_res_get",
    "clock_time_get",
    "fd_write",
    "fd_fdstat_get",
    "fd_prestat_get",
    "proc_exit",
    "random_get",
    "sched_yield",
];

fn add_module<T: Send + 'static>(linker: &mut Linker<T>, m: &str) -> Result<()> {
    // No arguments and no environment: both counts are zero.
    for name in ["args_sizes_get", "environ_sizes_get"] {
        linker.func_wrap(m, name, |mut c: Caller<'_, T>, count: i32, size: i32| {
            errno_of(write_u32(&mut c, count, 0).and_then(|()| write_u32(&mut c, size, 0)))
        })?;
    }
    for name in ["args_get", "environ_get"] {
        linker.func_wrap(m, name, |_: Caller<'_, T>, _: i32, _: i32| errno::SUCCESS)?;
    }
    linker.func_wrap(
        m,
        "clock_res_get",
        |mut c: Caller<'_, T>, id: i32, out: i32| match id {
            0 | 1 => errno_of(write_u64(&mut c, out, 1)),
            _ => errno::INVAL,
        },
    )?;
    linker.func_wrap(
        m,
        "clock_time_get",
        |mut c: Caller<'_, T>, id: i32, _precision: i64, out: i32| match clock(id) {
            Some(now) => errno_of(write_u64(&mut c, out, now)),
            None => errno::INVAL,
        },
    )?;
    linker.func_wrap(
        m,
        "fd_write",
        |mut c: Caller<'_, T>, fd: i32, iovs: i32, iovs_len: i32, written: i32| {
            let bytes = match gather(&mut c, iovs, iovs_len) {
                Ok(bytes) => bytes,
                Err(e) => return e,
            };
            let result = match fd {
                1 => std::io::stdout().lock().write_all(&bytes),
                2 => std::io::stderr().lock().write_all(&bytes),
                _ => return errno::BADF,
            };
            if result.is_err() {
                return errno::IO;
            }
            errno_of(write_u32(&mut c, written, bytes.len() as u32))
        },
    )?;
    linker.func_wrap(
        m,
        "fd_fdstat_get",
        |mut c: Caller<'_, T>, fd: i32, out: i32| {
            if !(0..=2).contains(&fd) {
                return errno::BADF;
            }
            // fdstat: filetype (character device), flags, rights base and
            // inheriting (all).
            let mut stat = [0u8; 24];
            stat[0] = 2;
            stat[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
            stat[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
            errno_of(write_bytes(&mut c, out, &stat))
        },
    )?;
    // No preopened directories: the first descriptor after stdio is not one.
    linker.func_wrap(m, "fd_prestat_get", |_: Caller<'_, T>, _: i32, _: i32| {
        errno::BADF
    })?;
    linker.func_wrap(
        m,
        "proc_exit",
        |_: Caller<'_, T>, code: i32| -> Result<()> { Err(wasmtime::Error::new(Exit(code))) },
    )?;
    linker.func_wrap(
        m,
        "random_get",
        |mut c: Caller<'_, T>, buf: i32, len: i32| {
            let mut bytes = vec![0u8; len as u32 as usize];
            if random(&mut bytes).is_err() {
                return errno::IO;
            }
            errno_of(write_bytes(&mut c, buf, &bytes))
        },
    )?;
    linker.func_wrap(m, "sched_yield", |_: Caller<'_, T>| errno::SUCCESS)?;
    Ok(())
}

/// Nanoseconds on the realtime (0) or monotonic (1) clock.
fn clock(id: i32) -> Option<u64> {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    match id {
        0 => SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .ok()
            .map(|d| d.as_nanos() as u64),
        1 => Some(ORIGIN.get_or_init(Instant::now).elapsed().as_nanos() as u64),
        _ => None,
    }
}

fn random(bytes: &mut [u8]) -> std::io::Result<()> {
    std::fs::File::open("/dev/urandom")?.read_exact(bytes)
}

/// The bytes of a preview 1 `ciovec` array (pointer and length, 8 bytes
/// each entry).
fn gather<T>(c: &mut Caller<'_, T>, iovs: i32, len: i32) -> Result<Vec<u8>, i32> {
    let memory = memory(c).ok_or(errno::FAULT)?;
    let data = memory.data(&*c);
    let mut bytes = Vec::new();
    for i in 0..len as u32 as usize {
        let entry = (iovs as u32 as usize)
            .checked_add(i * 8)
            .and_then(|at| data.get(at..at + 8))
            .ok_or(errno::FAULT)?;
        let ptr = u32::from_le_bytes(entry[..4].try_into().expect("4 bytes")) as usize;
        let len = u32::from_le_bytes(entry[4..].try_into().expect("4 bytes")) as usize;
        let buf = ptr
            .checked_add(len)
            .and_then(|end| data.get(ptr..end))
            .ok_or(errno::FAULT)?;
        bytes.extend_from_slice(buf);
    }
    Ok(bytes)
}

/// The guest's exported linear memory, if any.
pub fn memory<T>(c: &mut Caller<'_, T>) -> Option<Memory> {
    match c.get_export("memory") {
        Some(Extern::Memory(memory)) => Some(memory),
        _ => None,
    }
}

fn write_bytes<T>(c: &mut Caller<'_, T>, ptr: i32, bytes: &[u8]) -> Result<(), i32> {
    let memory = memory(c).ok_or(errno::FAULT)?;
    memory
        .write(c, ptr as u32 as usize, bytes)
        .map_err(|_| errno::FAULT)
}

fn write_u32<T>(c: &mut Caller<'_, T>, ptr: i32, value: u32) -> Result<(), i32> {
    write_bytes(c, ptr, &value.to_le_bytes())
}

fn write_u64<T>(c: &mut Caller<'_, T>, ptr: i32, value: u64) -> Result<(), i32> {
    write_bytes(c, ptr, &value.to_le_bytes())
}

fn errno_of(result: Result<(), i32>) -> i32 {
    result.err().unwrap_or(errno::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::{Engine, Instance, Store};

    /// A module importing a few preview 1 functions, each re-exported
    /// through a wrapper, with one page of memory.
    const GUEST: &str = r#"(module
      (import "wasi_snapshot_preview1" "environ_sizes_get" (func $environ_sizes_get (param i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "clock_time_get" (func $clock_time_get (param i32 i64 i32) (result i32)))
      (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
      (memory (export "memory") 1)
      (func (export "environ_sizes_get") (param i32 i32) (result i32) (call $environ_sizes_get (local.get 0) (local.get 1)))
      (func (export "random_get") (param i32 i32) (result i32) (call $random_get (local.get 0) (local.get 1)))
      (func (export "clock_time_get") (param i32 i32) (result i32) (call $clock_time_get (local.get 0) (i64.const 1) (local.get 1)))
      (func (export "fd_write") (param i32 i32 i32 i32) (result i32) (call $fd_write (local.get 0) (local.get 1) (local.get 2) (local.get 3)))
      (func (export "fd_read") (param i32 i32 i32 i32) (result i32) (call $fd_read (local.get 0) (local.get 1) (local.get 2) (local.get 3)))
      (func (export "proc_exit") (param i32) (call $proc_exit (local.get 0))))"#;

    fn instance() -> (Store<()>, Instance) {
        let engine = Engine::default();
        let module = Module::new(&engine, wat::parse_str(GUEST).unwrap()).unwrap();
        let mut linker = Linker::new(&engine);
        add_to_linker(&mut linker, &module).unwrap();
        let mut store = Store::new(&engine, ());
        let instance = linker.instantiate(&mut store, &module).unwrap();
        (store, instance)
    }

    fn call2(store: &mut Store<()>, instance: &Instance, name: &str, a: i32, b: i32) -> i32 {
        let f = instance.get_typed_func::<(i32, i32), i32>(&mut *store, name);
        f.unwrap().call(store, (a, b)).unwrap()
    }

    fn memory(store: &mut Store<()>, instance: &Instance) -> Memory {
        instance.get_memory(&mut *store, "memory").unwrap()
    }

    #[test]
    fn the_environment_is_empty() {
        let (mut store, instance) = instance();
        memory(&mut store, &instance).data_mut(&mut store)[..8].fill(0xff);
        assert_eq!(call2(&mut store, &instance, "environ_sizes_get", 0, 4), 0);
        assert_eq!(&memory(&mut store, &instance).data(&store)[..8], &[0; 8]);
    }

    #[test]
    fn random_get_fills_the_buffer_and_refuses_one_outside_memory() {
        let (mut store, instance) = instance();
        assert_eq!(call2(&mut store, &instance, "random_get", 16, 64), 0);
        let bytes = memory(&mut store, &instance).data(&store)[16..80].to_vec();
        assert!(
            bytes.iter().any(|b| *b != 0),
            "64 random bytes are not all zero"
        );
        assert_eq!(
            call2(&mut store, &instance, "random_get", 65_530, 64),
            errno::FAULT
        );
    }

    #[test]
    fn realtime_clock_is_after_2020() {
        let (mut store, instance) = instance();
        assert_eq!(call2(&mut store, &instance, "clock_time_get", 0, 8), 0);
        let raw = memory(&mut store, &instance).data(&store)[8..16].to_vec();
        let nanos = u64::from_le_bytes(raw.try_into().unwrap());
        assert!(nanos > 1_577_836_800_000_000_000, "{nanos}");
        // Neither process nor thread CPU time is offered.
        assert_eq!(
            call2(&mut store, &instance, "clock_time_get", 2, 8),
            errno::INVAL
        );
    }

    #[test]
    fn fd_write_counts_what_it_wrote_and_refuses_other_descriptors() {
        let (mut store, instance) = instance();
        // One ciovec at 0 pointing at 2 bytes at 100 ("\n" twice is quiet
        // enough on the test's stderr).
        let mem = memory(&mut store, &instance);
        mem.write(&mut store, 0, &100u32.to_le_bytes()).unwrap();
        mem.write(&mut store, 4, &2u32.to_le_bytes()).unwrap();
        mem.write(&mut store, 100, b"\n\n").unwrap();
        let fd_write = instance
            .get_typed_func::<(i32, i32, i32, i32), i32>(&mut store, "fd_write")
            .unwrap();
        assert_eq!(fd_write.call(&mut store, (2, 0, 1, 200)).unwrap(), 0);
        assert_eq!(&mem.data(&store)[200..204], &2u32.to_le_bytes());
        assert_eq!(
            fd_write.call(&mut store, (7, 0, 1, 200)).unwrap(),
            errno::BADF
        );
        // A ciovec pointing past the end of memory.
        mem.write(&mut store, 0, &65_535u32.to_le_bytes()).unwrap();
        assert_eq!(
            fd_write.call(&mut store, (2, 0, 1, 200)).unwrap(),
            errno::FAULT
        );
    }

    #[test]
    fn a_function_this_host_lacks_answers_enosys() {
        let (mut store, instance) = instance();
        let fd_read = instance
            .get_typed_func::<(i32, i32, i32, i32), i32>(&mut store, "fd_read")
            .unwrap();
        assert_eq!(
            fd_read.call(&mut store, (0, 0, 1, 8)).unwrap(),
            errno::NOSYS
        );
    }

    #[test]
    fn proc_exit_ends_the_call_with_its_code() {
        let (mut store, instance) = instance();
        let proc_exit = instance
            .get_typed_func::<i32, ()>(&mut store, "proc_exit")
            .unwrap();
        let error = proc_exit.call(&mut store, 3).unwrap_err();
        assert_eq!(error.downcast_ref::<Exit>().map(|e| e.0), Some(3));
    }
}
