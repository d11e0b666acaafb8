//! A per-request bump allocator for the policy's wasm module.
//!
//! policy-server evaluates every request on a fresh instance and then throws
//! the instance away (BENCHMARKS.md, "A correction first"), so every `free`
//! the policy makes during a request is work nobody needs: the memory goes
//! with the instance. While a `validate` call runs, allocations are carved
//! from chunks by bumping a pointer and frees are no-ops (bar the most
//! recent allocation, so a growing `Vec` or `String` stays in place).
//!
//! A host that reuses the instance (kwctl, `policy-runner --reuse-instance`)
//! must not see memory grow, so the chunks are rewound at the start of the
//! next `validate`, when everything allocated during the previous one is
//! dead: wapc-guest drops the payload and the answer before `__guest_call`
//! returns (`wapc-guest` 1.2, `src/protocol.rs`), and the policy keeps
//! nothing in statics. That is checked, not assumed: the arena counts its
//! live allocations and rewinds only when none is left; otherwise it keeps
//! bumping, which leaks but never reuses memory that is still in use.
//!
//! Outside a request (`wapc_init`, `validate_settings`) and for allocations
//! larger than a chunk, the system allocator (wasi-libc's dlmalloc) serves.

use std::alloc::{GlobalAlloc, Layout};
use std::ptr;

/// The first chunk's size; each further chunk doubles it. Most requests fit
/// in the first one or two (BENCHMARKS.md, "The policy's own cost, against the look-up floor").
const FIRST_CHUNK: usize = 64 * 1024;

/// At most this many chunks: the last would be 64 KiB << 15 = 2 GiB, past
/// what a wasm32 memory can hold.
const MAX_CHUNKS: usize = 16;

/// A bump allocator over chunks taken from `S`, with a rewind.
///
/// Not thread-safe: the wasm module is single-threaded, and the global
/// wrapper is compiled for wasm32 only.
#[derive(Debug)]
pub struct Arena<S> {
    source: S,
    active: bool,
    /// `(start, end)` of each chunk taken from `source`, kept for reuse.
    chunks: [(usize, usize); MAX_CHUNKS],
    count: usize,
    /// The chunk being bumped, and the next free address in it.
    current: usize,
    next: usize,
    /// Where the most recent allocation starts, if it can still be grown or
    /// given back in place.
    last: Option<usize>,
    /// Allocations carved from the chunks and not yet freed.
    live: usize,
}

impl<S: GlobalAlloc> Arena<S> {
    /// An arena that takes its chunks from `source` and serves outside
    /// requests from it too.
    pub const fn new(source: S) -> Self {
        Arena {
            source,
            active: false,
            chunks: [(0, 0); MAX_CHUNKS],
            count: 0,
            current: 0,
            next: 0,
            last: None,
            live: 0,
        }
    }

    /// Starts a request: rewinds the chunks if nothing carved from them is
    /// still alive, then serves allocations from them until [`Arena::end`].
    pub fn begin(&mut self) {
        if self.live == 0 && self.count > 0 {
            self.current = 0;
            self.next = self.chunks[0].0;
            self.last = None;
        }
        self.active = true;
    }

    /// Ends a request: allocations go to the source again. What the request
    /// allocated stays valid until the next [`Arena::begin`] finds it freed.
    pub fn end(&mut self) {
        self.active = false;
    }

    /// The bytes taken from the source for chunks (what a warm host keeps).
    pub fn reserved(&self) -> usize {
        self.chunks[..self.count].iter().map(|(s, e)| e - s).sum()
    }

    fn owns(&self, at: usize) -> bool {
        self.chunks[..self.count]
            .iter()
            .any(|&(start, end)| (start..end).contains(&at))
    }

    /// Carves `layout` from the current chunk, moving to the next chunk (or
    /// taking a new one) when it does not fit; `None` if it cannot.
    fn carve(&mut self, layout: Layout) -> Option<*mut u8> {
        loop {
            if self.count > 0 {
                let end = self.chunks[self.current].1;
                let at = self.next.checked_next_multiple_of(layout.align())?;
                if at.checked_add(layout.size())? <= end {
                    self.next = at + layout.size();
                    self.last = Some(at);
                    self.live += 1;
                    return Some(at as *mut u8);
                }
            }
            if self.count > 0 && self.current + 1 < self.count {
                self.current += 1;
            } else {
                self.grow(layout)?;
            }
            self.next = self.chunks[self.current].0;
            self.last = None;
        }
    }

    /// Takes a new chunk, big enough for `layout`, and makes it current.
    fn grow(&mut self, layout: Layout) -> Option<()> {
        if self.count == MAX_CHUNKS {
            return None;
        }
        let size = (FIRST_CHUNK << self.count).max(layout.size() + layout.align());
        let chunk = Layout::from_size_align(size, 16).ok()?;
        // SAFETY: `chunk` has a non-zero size.
        let start = unsafe { self.source.alloc(chunk) };
        if start.is_null() {
            return None;
        }
        let start = start as usize;
        self.chunks[self.count] = (start, start + size);
        self.current = self.count;
        self.count += 1;
        Some(())
    }

    /// Allocates `layout`: carved from a chunk during a request, from the
    /// source otherwise (or when it is larger than a chunk).
    ///
    /// # Safety
    /// As [`GlobalAlloc::alloc`].
    pub unsafe fn alloc(&mut self, layout: Layout) -> *mut u8 {
        if self.active
            && layout.size() <= FIRST_CHUNK
            && let Some(at) = self.carve(layout)
        {
            return at;
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.source.alloc(layout) }
    }

    /// Frees `at`: a no-op for chunk memory (the most recent allocation is
    /// given back), the source's `dealloc` otherwise.
    ///
    /// # Safety
    /// As [`GlobalAlloc::dealloc`].
    pub unsafe fn dealloc(&mut self, at: *mut u8, layout: Layout) {
        let address = at as usize;
        if self.owns(address) {
            self.live -= 1;
            if self.last == Some(address) {
                self.next = address;
                self.last = None;
            }
        } else {
            // SAFETY: not chunk memory, so the source allocated it.
            unsafe { self.source.dealloc(at, layout) }
        }
    }

    /// Resizes `at`: in place when it is the most recent chunk allocation
    /// and the chunk has room, else moved.
    ///
    /// # Safety
    /// As [`GlobalAlloc::realloc`].
    pub unsafe fn realloc(&mut self, at: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let address = at as usize;
        if !self.owns(address) {
            // SAFETY: not chunk memory, so the source allocated it.
            return unsafe { self.source.realloc(at, layout, new_size) };
        }
        let end = self.chunks[self.current].1;
        if self.last == Some(address)
            && address
                .checked_add(new_size)
                .is_some_and(|new_end| new_end <= end)
        {
            self.next = address + new_size;
            return at;
        }
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return ptr::null_mut();
        };
        // SAFETY: forwarded from the caller; `new_size` is non-zero.
        let moved = unsafe { self.alloc(new_layout) };
        if !moved.is_null() {
            // SAFETY: both blocks are valid for the smaller size and are
            // distinct (the new one was carved or allocated after `at`).
            unsafe { ptr::copy_nonoverlapping(at, moved, layout.size().min(new_size)) };
            // SAFETY: `at` is chunk memory allocated with `layout`.
            unsafe { self.dealloc(at, layout) };
        }
        moved
    }
}

/// The module's global allocator: one [`Arena`] over wasi-libc's malloc.
#[cfg(all(target_arch = "wasm32", feature = "wapc-entry"))]
pub mod global {
    use super::Arena;
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::UnsafeCell;

    /// The arena behind the module's `#[global_allocator]`.
    pub struct RequestArena(UnsafeCell<Arena<System>>);

    // SAFETY: wasm32-wasip1 modules are single-threaded; nothing else can
    // reach the cell while one call holds it.
    unsafe impl Sync for RequestArena {}

    #[global_allocator]
    static ARENA: RequestArena = RequestArena(UnsafeCell::new(Arena::new(System)));

    fn arena() -> &'static mut Arena<System> {
        // SAFETY: single-threaded, and no caller holds the reference across
        // another call into the allocator.
        unsafe { &mut *ARENA.0.get() }
    }

    /// Runs one request's work with its allocations carved from the arena.
    pub fn per_request<T>(work: impl FnOnce() -> T) -> T {
        arena().begin();
        let answer = work();
        arena().end();
        answer
    }

    // SAFETY: each method forwards to the arena's, which upholds
    // GlobalAlloc's contract.
    unsafe impl GlobalAlloc for RequestArena {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            unsafe { arena().alloc(layout) }
        }
        unsafe fn dealloc(&self, at: *mut u8, layout: Layout) {
            unsafe { arena().dealloc(at, layout) }
        }
        unsafe fn realloc(&self, at: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            unsafe { arena().realloc(at, layout, new_size) }
        }
    }
}

/// Native builds (tests, tools) keep the system allocator.
#[cfg(not(all(target_arch = "wasm32", feature = "wapc-entry")))]
pub mod global {
    /// Runs `work`; only the wasm module carves its allocations from an arena.
    pub fn per_request<T>(work: impl FnOnce() -> T) -> T {
        work()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::System;

    fn layout(size: usize) -> Layout {
        Layout::from_size_align(size, 8).unwrap()
    }

    #[test]
    fn a_request_bumps_and_the_next_one_rewinds_when_all_is_freed() {
        let mut arena = Arena::new(System);
        for _ in 0..1000 {
            arena.begin();
            let blocks: Vec<_> = (0..100)
                .map(|i| unsafe { arena.alloc(layout(16 + i)) })
                .collect();
            assert!(blocks.windows(2).all(|w| w[0] < w[1]), "bumped upwards");
            arena.end();
            for (i, block) in blocks.into_iter().enumerate() {
                unsafe { arena.dealloc(block, layout(16 + i)) };
            }
        }
        assert_eq!(arena.reserved(), FIRST_CHUNK, "one chunk, reused");
    }

    #[test]
    fn memory_still_alive_at_the_next_request_is_never_reused() {
        let mut arena = Arena::new(System);
        arena.begin();
        let kept = unsafe { arena.alloc(layout(64)) };
        unsafe { kept.write_bytes(0xAB, 64) };
        arena.end();
        arena.begin();
        let next = unsafe { arena.alloc(layout(64)) };
        assert_ne!(kept, next);
        unsafe { next.write_bytes(0, 64) };
        assert!((0..64).all(|i| unsafe { *kept.add(i) } == 0xAB));
        arena.end();
    }

    #[test]
    fn the_most_recent_allocation_grows_and_shrinks_in_place() {
        let mut arena = Arena::new(System);
        arena.begin();
        let a = unsafe { arena.alloc(layout(8)) };
        let grown = unsafe { arena.realloc(a, layout(8), 4096) };
        assert_eq!(a, grown);
        let b = unsafe { arena.alloc(layout(8)) };
        unsafe { arena.dealloc(b, layout(8)) };
        assert_eq!(unsafe { arena.alloc(layout(8)) }, b, "given back in place");
        arena.end();
    }

    #[test]
    fn a_moved_block_keeps_its_bytes() {
        let mut arena = Arena::new(System);
        arena.begin();
        let a = unsafe { arena.alloc(layout(32)) };
        unsafe { a.copy_from((0u8..32).collect::<Vec<_>>().as_ptr(), 32) };
        let _b = unsafe { arena.alloc(layout(8)) };
        let moved = unsafe { arena.realloc(a, layout(32), 100) };
        assert_ne!(a, moved);
        assert!((0..32u8).all(|i| unsafe { *moved.add(i as usize) } == i));
        arena.end();
    }

    #[test]
    fn chunks_grow_for_big_requests_and_large_blocks_go_to_the_source() {
        let mut arena = Arena::new(System);
        arena.begin();
        let many: Vec<_> = (0..200)
            .map(|_| unsafe { arena.alloc(layout(1024)) })
            .collect();
        assert!(
            arena.reserved() > FIRST_CHUNK,
            "more chunks: {}",
            arena.reserved()
        );
        let large = unsafe { arena.alloc(layout(FIRST_CHUNK + 1)) };
        assert!(!arena.owns(large as usize));
        unsafe { arena.dealloc(large, layout(FIRST_CHUNK + 1)) };
        arena.end();
        for block in many {
            unsafe { arena.dealloc(block, layout(1024)) };
        }
        let reserved = arena.reserved();
        arena.begin();
        for _ in 0..200 {
            unsafe { arena.alloc(layout(1024)) };
        }
        assert_eq!(arena.reserved(), reserved, "the same chunks, reused");
    }

    #[test]
    fn outside_a_request_the_source_serves() {
        let mut arena = Arena::new(System);
        let a = unsafe { arena.alloc(layout(16)) };
        assert_eq!(arena.reserved(), 0);
        unsafe { arena.dealloc(a, layout(16)) };
    }
}
