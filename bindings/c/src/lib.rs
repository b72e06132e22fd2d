//! The C ABI of the golden-model checker (docs/cosim.md, "SystemVerilog DPI-C"): an RTL
//! testbench's monitors hand each event to the model as it happens, as scalars, and read
//! back the divergences. `include/mmu_model.h` (cbindgen) declares it for C and C++,
//! `sv/mmu_model_pkg.sv` imports it for SystemVerilog (`import "DPI-C"`).
//!
//! - A handle ([`MmuChecker`]) is made by [`mmu_new`] from a built-in scenario's name or a
//!   TOML file (the switch of its `[switch]` table) and freed by [`mmu_free`].
//! - The event functions ([`mmu_arrive`], [`mmu_admit`], [`mmu_drop`], [`mmu_depart`],
//!   [`mmu_pfc`]) take the fields of the stream's events (docs/cosim.md, "The event
//!   stream") and return the number of divergences the event settled (>= 0), or a
//!   negative code: [`MMU_ERR_NULL`], [`MMU_ERR_INPUT`] (the event was refused, e.g. a port
//!   out of range: [`mmu_last_error`] names the field and its allowed range),
//!   [`MMU_ERR_PANIC`] (a bug of the model, caught: the handle refuses every later event).
//! - [`mmu_arrive_crc`] and [`mmu_depart_crc`] carry the payload's CRC-32 besides (the
//!   `crc` of the stream's events), compared per packet.
//! - [`mmu_meta`] gives the DUT's parameters (the stream's `meta`); where they disagree
//!   with the scenario, [`mmu_warnings`] and [`mmu_warning_text`] say so.
//! - [`mmu_finish`] runs the end-of-stream checks; [`mmu_errors`], [`mmu_error_cycle`],
//!   [`mmu_error_check`], [`mmu_error_message`] and [`mmu_error_text`] read the
//!   divergences found so far, in the order found.
//!
//! No panic crosses the boundary: every function runs under `catch_unwind`.

use checker::events::{Admit, Arrive, Depart, Dir, Drop, Event, Meta, Pfc, Segments, SCHEMA};
use checker::{Decisions, Divergence, LineRate, Mode, Options};
use hw_model::Derived;
use scenario::{resolve_scenario, Overrides, Scenario};
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Success (the functions that return no count).
pub const MMU_OK: i32 = 0;
/// A NULL handle or string, or a divergence index out of range.
pub const MMU_ERR_NULL: i32 = -1;
/// The call was refused: [`mmu_last_error`] says which field and its allowed range.
pub const MMU_ERR_INPUT: i32 = -2;
/// The model panicked (a bug): caught; the handle refuses every later event.
pub const MMU_ERR_PANIC: i32 = -3;

/// `mode` of [`mmu_new`]: the DUT's events drive the model (docs/cosim.md, "Follow mode").
pub const MMU_MODE_FOLLOW: u32 = 0;
/// `mode` of [`mmu_new`]: the model is stepped with the DUT's inputs, every event compared.
pub const MMU_MODE_LOCKSTEP: u32 = 1;
/// `line_rate` of [`mmu_new`]: the scenario's port rate.
pub const MMU_LINE_RATE_SCENARIO: u32 = 0;
/// `line_rate` of [`mmu_new`]: one cell per cycle per port (the project's RTL).
pub const MMU_LINE_RATE_CELL_PER_CYCLE: u32 = 1;
/// `decisions` of [`mmu_new_decisions`]: the DUT reports an admit or drop for every start
/// of packet, checked against the model's.
pub const MMU_DECISIONS_REPORTED: u32 = 0;
/// `decisions` of [`mmu_new_decisions`]: the DUT reports arrivals and departures only; the
/// model decides each arrival (docs/cosim.md, "Decisions inferred").
pub const MMU_DECISIONS_INFERRED: u32 = 1;
/// `dir` of [`mmu_pfc`]: the DUT sent the PAUSE/RESUME (its ingress queue's QOFF changed).
pub const MMU_PFC_SENT: u8 = 0;
/// `dir` of [`mmu_pfc`]: the DUT's egress queue received it.
pub const MMU_PFC_RECEIVED: u8 = 1;

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

fn set_last_error(msg: String) {
    LAST_ERROR.with(|e| *e.borrow_mut() = msg);
}

/// Text for C: NUL-terminated, any NUL inside replaced.
fn c_text(s: String) -> CString {
    CString::new(s.replace('\0', " ")).unwrap_or_default()
}

/// A divergence, with its texts NUL-terminated for C.
struct Found {
    cycle: u64,
    check: CString,
    text: CString,
}

impl From<Divergence> for Found {
    fn from(d: Divergence) -> Self {
        Self {
            cycle: d.cycle,
            check: c_text(d.check.to_string()),
            text: c_text(d.to_string()),
        }
    }
}

/// The checker behind a handle (opaque to C).
pub struct MmuChecker {
    inner: checker::Checker,
    /// Events fed: the "line" the divergences cite.
    line: usize,
    found: Vec<Found>,
    /// Where the DUT's parameters ([`mmu_meta`]) and the scenario disagree.
    warnings: Vec<CString>,
    poisoned: bool,
}

impl MmuChecker {
    /// Feed `ev`: the number of divergences it settled.
    fn feed(&mut self, ev: Event) -> Result<i32, String> {
        self.line += 1;
        self.inner.feed(self.line, ev).map_err(|e| e.to_string())?;
        Ok(self.collect())
    }

    fn collect(&mut self) -> i32 {
        let new = self.inner.take();
        let n = new.len();
        self.found.extend(new.into_iter().map(Found::from));
        i32::try_from(n).unwrap_or(i32::MAX)
    }
}

/// The switch of a built-in scenario or of a TOML file.
fn derived(scenario: &str) -> Result<Derived, String> {
    let src = resolve_scenario(scenario).map_err(|e| e.to_string())?;
    let plan = Scenario::parse(&src.text, &src.name).and_then(|s| s.plan(&Overrides::default()));
    plan.map(|p| p.derived)
        .map_err(|e| format!("{scenario}: {e}"))
}

/// A C string argument, or the message naming it.
///
/// # Safety
/// `s` is NULL or a NUL-terminated string valid for the call.
unsafe fn text<'a>(name: &str, s: *const c_char) -> Result<&'a str, String> {
    if s.is_null() {
        return Err(format!("{name}: NULL"));
    }
    // SAFETY: not NULL, and NUL-terminated and valid by the caller's contract.
    let s = unsafe { CStr::from_ptr(s) };
    s.to_str().map_err(|e| format!("{name}: not UTF-8: {e}"))
}

/// Run `f` on the handle: NULL and poisoned handles refused, panics caught, errors kept
/// for [`mmu_last_error`].
///
/// # Safety
/// `h` is NULL or a live handle from [`mmu_new`], used by one thread at a time.
unsafe fn with(h: *mut MmuChecker, f: impl FnOnce(&mut MmuChecker) -> Result<i32, String>) -> i32 {
    if h.is_null() {
        set_last_error("handle: NULL".into());
        return MMU_ERR_NULL;
    }
    // SAFETY: a live handle from mmu_new (a Box), not aliased: the caller's contract.
    let h = unsafe { &mut *h };
    if h.poisoned {
        set_last_error("handle: the model panicked earlier; make a new one".into());
        return MMU_ERR_PANIC;
    }
    match catch_unwind(AssertUnwindSafe(|| f(h))) {
        Ok(Ok(n)) => n,
        Ok(Err(msg)) => {
            set_last_error(msg);
            MMU_ERR_INPUT
        }
        Err(_) => {
            h.poisoned = true;
            set_last_error("the model panicked (a bug of the model); the handle is closed".into());
            MMU_ERR_PANIC
        }
    }
}

/// Read divergence `i` of the handle.
///
/// # Safety
/// As [`with`].
unsafe fn found<T>(h: *const MmuChecker, i: u32, f: impl FnOnce(&Found) -> T) -> Option<T> {
    // SAFETY: NULL or a live handle from mmu_new: the caller's contract.
    let h = unsafe { h.as_ref() }?;
    h.found.get(i as usize).map(f)
}

/// Copy `s` into `buf` (`len` bytes, NUL-terminated, cut if too long) like `snprintf`:
/// the length of `s`.
///
/// # Safety
/// `buf` is NULL (with `len` 0) or writable for `len` bytes.
unsafe fn copy_out(s: &CStr, buf: *mut c_char, len: u32) -> i32 {
    let bytes = s.to_bytes();
    if !buf.is_null() && len > 0 {
        let n = bytes.len().min(len as usize - 1);
        // SAFETY: buf is writable for len > n bytes (the caller's contract); the source is
        // a separate Rust allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), buf, n);
            *buf.add(n) = 0;
        }
    }
    i32::try_from(bytes.len()).unwrap_or(i32::MAX)
}

/// A checker of the switch of `scenario` (a built-in scenario's name, or a TOML file's
/// path). `mode`: [`MMU_MODE_FOLLOW`] or [`MMU_MODE_LOCKSTEP`]; `line_rate`:
/// [`MMU_LINE_RATE_SCENARIO`] or [`MMU_LINE_RATE_CELL_PER_CYCLE`]; `pfc_tolerance`: cycles
/// a sent PAUSE/RESUME may be early or late (follow mode; `mmu-sim check`'s default is 2).
/// NULL on bad input: [`mmu_last_error`] says why.
///
/// # Safety
/// `scenario` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn mmu_new(
    scenario: *const c_char,
    mode: u32,
    line_rate: u32,
    pfc_tolerance: u64,
) -> *mut MmuChecker {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        mmu_new_decisions(
            scenario,
            mode,
            line_rate,
            pfc_tolerance,
            MMU_DECISIONS_REPORTED,
        )
    }
}

/// [`mmu_new`] with where the decisions come from: [`MMU_DECISIONS_REPORTED`] (what
/// `mmu_new` does) or [`MMU_DECISIONS_INFERRED`] (a DUT that exports no decision: call
/// [`mmu_arrive`] and [`mmu_depart`] only).
///
/// # Safety
/// `scenario` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn mmu_new_decisions(
    scenario: *const c_char,
    mode: u32,
    line_rate: u32,
    pfc_tolerance: u64,
    decisions: u32,
) -> *mut MmuChecker {
    let made = catch_unwind(|| {
        // SAFETY: forwarded from the caller's contract.
        let scenario = unsafe { text("scenario", scenario) }?;
        let mode = match mode {
            MMU_MODE_FOLLOW => Mode::Follow,
            MMU_MODE_LOCKSTEP => Mode::Lockstep,
            _ => return Err(format!("mode: {mode}; allowed: 0 (follow), 1 (lockstep)")),
        };
        let line_rate = match line_rate {
            MMU_LINE_RATE_SCENARIO => LineRate::Scenario,
            MMU_LINE_RATE_CELL_PER_CYCLE => LineRate::CellPerCycle,
            _ => {
                return Err(format!(
                    "line_rate: {line_rate}; allowed: 0 (scenario), 1 (cell per cycle)"
                ))
            }
        };
        let decisions = match decisions {
            MMU_DECISIONS_REPORTED => Decisions::Reported,
            MMU_DECISIONS_INFERRED => Decisions::Inferred,
            _ => {
                return Err(format!(
                    "decisions: {decisions}; allowed: 0 (reported), 1 (inferred)"
                ))
            }
        };
        let opts = Options {
            mode,
            line_rate,
            pfc_tolerance,
            decisions,
        };
        Ok(MmuChecker {
            inner: checker::Checker::new(derived(scenario)?, opts),
            line: 0,
            found: Vec::new(),
            warnings: Vec::new(),
            poisoned: false,
        })
    });
    match made {
        Ok(Ok(h)) => Box::into_raw(Box::new(h)),
        Ok(Err(msg)) => {
            set_last_error(msg);
            std::ptr::null_mut()
        }
        Err(_) => {
            set_last_error("the model panicked while building the checker (a bug)".into());
            std::ptr::null_mut()
        }
    }
}

/// Free a handle of [`mmu_new`] (NULL: nothing).
///
/// # Safety
/// `h` is NULL or a live handle, not used after this call.
#[no_mangle]
pub unsafe extern "C" fn mmu_free(h: *mut MmuChecker) {
    if !h.is_null() {
        // SAFETY: a handle from mmu_new's Box::into_raw, freed once (the caller's
        // contract). Dropping the checker does not panic across the boundary: it only
        // frees memory.
        drop(unsafe { Box::from_raw(h) });
    }
}

/// The message of the last call that failed on this thread, copied into `out` like
/// `snprintf`: its length.
///
/// # Safety
/// `out` is NULL (with `len` 0) or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mmu_last_error(out: *mut c_char, len: u32) -> i32 {
    let msg = LAST_ERROR.with(|e| e.borrow().replace('\0', " "));
    let msg = CString::new(msg).unwrap_or_default();
    // SAFETY: forwarded from the caller's contract.
    unsafe { copy_out(&msg, out, len) }
}

/// The DUT's parameters, as the `params` object of the stream's `meta` line (JSON text,
/// e.g. `{"P":4,"CELL_BYTES":64,"N_CELLS":512}`; the names docs/cosim.md lists): each one
/// that disagrees with the scenario (policy, ports, cell size, buffer cells, alpha) is a
/// warning, read with [`mmu_warnings`] and [`mmu_warning_text`]; the check still runs.
/// Call it before the first event. Returns the number of warnings it gave, or a negative
/// code.
///
/// # Safety
/// As [`mmu_arrive`]; `params` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn mmu_meta(h: *mut MmuChecker, params: *const c_char) -> i32 {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        with(h, |h| {
            let text = text("meta.params", params)?;
            let params = serde_json::from_str(text)
                .map_err(|e| format!("meta.params: {e}; allowed: a JSON object"))?;
            let warned = h.inner.warnings.len();
            h.feed(Event::Meta(Meta {
                cycle: 0,
                schema: SCHEMA.into(),
                seed: 0,
                bug: None,
                config: String::new(),
                params,
                tool: None,
            }))?;
            let new: Vec<CString> = h.inner.warnings[warned..]
                .iter()
                .map(|w| c_text(w.clone()))
                .collect();
            h.warnings.extend(new);
            Ok(i32::try_from(h.inner.warnings.len() - warned).unwrap_or(i32::MAX))
        })
    }
}

/// Warnings given so far by [`mmu_meta`] (0 for NULL).
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn mmu_warnings(h: *const MmuChecker) -> u32 {
    // SAFETY: NULL or a live handle: the caller's contract.
    let n = unsafe { h.as_ref() }.map_or(0, |h| h.warnings.len());
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The text of warning `i` (e.g. `the stream's meta says P 8, the scenario's switch ports
/// is 4`), owned by the handle until [`mmu_free`] (NULL if `i` is out of range).
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn mmu_warning_text(h: *const MmuChecker, i: u32) -> *const c_char {
    // SAFETY: NULL or a live handle: the caller's contract.
    let h = unsafe { h.as_ref() };
    h.and_then(|h| h.warnings.get(i as usize))
        .map_or(std::ptr::null(), |w| w.as_ptr())
}

/// An `arrive` event, with the payload's CRC or none.
#[allow(clippy::too_many_arguments)]
fn arrive(
    cycle: u64,
    port: u8,
    prio: u8,
    flow: u32,
    seq: u32,
    bytes: u32,
    dst: u8,
    ncells: u16,
    crc: Option<u32>,
) -> Event {
    Event::Arrive(Arrive {
        cycle,
        port,
        prio,
        flow,
        seq,
        bytes,
        dst,
        ncells,
        cell: None,
        tuple: None,
        crc,
    })
}

/// The start of a packet on ingress `port` (an `arrive` event; its other cells follow one
/// per cycle): divergences settled, or a negative code.
///
/// # Safety
/// `h` is NULL or a live handle, used by one thread at a time.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mmu_arrive(
    h: *mut MmuChecker,
    cycle: u64,
    port: u8,
    prio: u8,
    flow: u32,
    seq: u32,
    bytes: u32,
    dst: u8,
    ncells: u16,
) -> i32 {
    let ev = arrive(cycle, port, prio, flow, seq, bytes, dst, ncells, None);
    // SAFETY: forwarded from the caller's contract.
    unsafe { with(h, |h| h.feed(ev)) }
}

/// [`mmu_arrive`] with `crc`, the CRC-32 of the packet's payload as driven in (docs/cosim.md,
/// "Payload integrity"), compared with its departure's ([`mmu_depart_crc`]).
///
/// # Safety
/// As [`mmu_arrive`].
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mmu_arrive_crc(
    h: *mut MmuChecker,
    cycle: u64,
    port: u8,
    prio: u8,
    flow: u32,
    seq: u32,
    bytes: u32,
    dst: u8,
    ncells: u16,
    crc: u32,
) -> i32 {
    let ev = arrive(cycle, port, prio, flow, seq, bytes, dst, ncells, Some(crc));
    // SAFETY: forwarded from the caller's contract.
    unsafe { with(h, |h| h.feed(ev)) }
}

/// The packet that started on `port` this cycle was admitted, its cells in the private,
/// shared and headroom segments as given (an `admit` event).
///
/// # Safety
/// As [`mmu_arrive`].
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mmu_admit(
    h: *mut MmuChecker,
    cycle: u64,
    port: u8,
    flow: u32,
    seq: u32,
    private_cells: u32,
    shared_cells: u32,
    headroom_cells: u32,
) -> i32 {
    let ev = Event::Admit(Admit {
        cycle,
        port,
        flow,
        seq,
        segments: Segments {
            private: private_cells,
            shared: shared_cells,
            headroom: headroom_cells,
        },
    });
    // SAFETY: forwarded from the caller's contract.
    unsafe { with(h, |h| h.feed(ev)) }
}

/// The packet that started on `port` this cycle was dropped whole, for `reason`
/// (`"headroom_full"`, `"lossy_threshold"`, `"hcf_full"`, `"egress_threshold"`).
///
/// # Safety
/// As [`mmu_arrive`]; `reason` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn mmu_drop(
    h: *mut MmuChecker,
    cycle: u64,
    port: u8,
    flow: u32,
    seq: u32,
    reason: *const c_char,
) -> i32 {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        with(h, |h| {
            let reason = text("drop.reason", reason)?.to_string();
            h.feed(Event::Drop(Drop {
                cycle,
                port,
                flow,
                seq,
                reason,
            }))
        })
    }
}

/// A `depart` event, with the payload's CRC or none.
#[allow(clippy::too_many_arguments)]
fn depart(
    cycle: u64,
    port: u8,
    queue: u8,
    flow: u32,
    seq: u32,
    src: u8,
    ncells: u16,
    crc: Option<u32>,
) -> Event {
    Event::Depart(Depart {
        cycle,
        port,
        queue,
        flow,
        seq,
        src,
        ncells,
        cell: None,
        crc,
    })
}

/// The first cell of a packet read from queue `queue_id` of egress `port` (a `depart` event,
/// stamped at the read; its other cells follow one per cycle).
///
/// # Safety
/// As [`mmu_arrive`].
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mmu_depart(
    h: *mut MmuChecker,
    cycle: u64,
    port: u8,
    queue_id: u8,
    flow: u32,
    seq: u32,
    src: u8,
    ncells: u16,
) -> i32 {
    let ev = depart(cycle, port, queue_id, flow, seq, src, ncells, None);
    // SAFETY: forwarded from the caller's contract.
    unsafe { with(h, |h| h.feed(ev)) }
}

/// [`mmu_depart`] with `crc`, the CRC-32 of the packet's payload as seen leaving. The call
/// keeps the stream's order (cycles not going back): a monitor that learns the CRC at the
/// packet's last cell holds its events back until then (`verilator/dpi_tb.sv` does).
///
/// # Safety
/// As [`mmu_arrive`].
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mmu_depart_crc(
    h: *mut MmuChecker,
    cycle: u64,
    port: u8,
    queue_id: u8,
    flow: u32,
    seq: u32,
    src: u8,
    ncells: u16,
    crc: u32,
) -> i32 {
    let ev = depart(cycle, port, queue_id, flow, seq, src, ncells, Some(crc));
    // SAFETY: forwarded from the caller's contract.
    unsafe { with(h, |h| h.feed(ev)) }
}

/// A PAUSE (`pause` 1) or RESUME (0) of class `cls` on `port`, sent
/// ([`MMU_PFC_SENT`]: the ingress queue's QOFF changed) or received ([`MMU_PFC_RECEIVED`]).
///
/// # Safety
/// As [`mmu_arrive`].
#[no_mangle]
pub unsafe extern "C" fn mmu_pfc(
    h: *mut MmuChecker,
    cycle: u64,
    port: u8,
    cls: u8,
    pause: u8,
    dir: u8,
) -> i32 {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        with(h, |h| {
            let dir = match dir {
                MMU_PFC_SENT => Dir::Sent,
                MMU_PFC_RECEIVED => Dir::Received,
                _ => return Err(format!("pfc.dir: {dir}; allowed: 0 (sent), 1 (received)")),
            };
            if pause > 1 {
                return Err(format!("pfc.pause: {pause}; allowed: 0, 1"));
            }
            h.feed(Event::Pfc(Pfc {
                cycle,
                port,
                class: cls,
                pause: pause == 1,
                dir,
                quanta: None,
                port_level: None,
            }))
        })
    }
}

/// The end of the stream: its last checks (cells not read, PFC levels still apart).
/// Divergences settled, or a negative code.
///
/// # Safety
/// As [`mmu_arrive`].
#[no_mangle]
pub unsafe extern "C" fn mmu_finish(h: *mut MmuChecker) -> i32 {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        with(h, |h| {
            h.inner.finish();
            Ok(h.collect())
        })
    }
}

/// Divergences found so far (0 for NULL).
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn mmu_errors(h: *const MmuChecker) -> u32 {
    // SAFETY: NULL or a live handle: the caller's contract.
    let n = unsafe { h.as_ref() }.map_or(0, |h| h.found.len());
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The cycle of divergence `i` (0 if `i` is out of range).
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn mmu_error_cycle(h: *const MmuChecker, i: u32) -> u64 {
    // SAFETY: forwarded from the caller's contract.
    unsafe { found(h, i, |f| f.cycle) }.unwrap_or(0)
}

/// The check divergence `i` failed, e.g. `"admission"`, `"leaked cells"` (NULL if `i` is
/// out of range); owned by the handle, valid until [`mmu_free`].
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn mmu_error_check(h: *const MmuChecker, i: u32) -> *const c_char {
    // SAFETY: forwarded from the caller's contract.
    unsafe { found(h, i, |f| f.check.as_ptr()) }.unwrap_or(std::ptr::null())
}

/// The text of divergence `i` (as `mmu-sim check` prints it: cycle, check, the DUT's event,
/// what the model expected, the last events) copied into `out` like `snprintf`: its
/// length, or [`MMU_ERR_NULL`] if `i` is out of range.
///
/// # Safety
/// `h` is NULL or a live handle; `out` is NULL (with `len` 0) or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mmu_error_message(
    h: *const MmuChecker,
    i: u32,
    out: *mut c_char,
    len: u32,
) -> i32 {
    // SAFETY: forwarded from the caller's contract.
    unsafe { found(h, i, |f| copy_out(&f.text, out, len)) }.unwrap_or(MMU_ERR_NULL)
}

/// The text of divergence `i`, owned by the handle until [`mmu_free`] (NULL if `i` is out
/// of range): [`mmu_error_message`] for SystemVerilog, whose `string` is a `const char *`.
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn mmu_error_text(h: *const MmuChecker, i: u32) -> *const c_char {
    // SAFETY: forwarded from the caller's contract.
    unsafe { found(h, i, |f| f.text.as_ptr()) }.unwrap_or(std::ptr::null())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last_error() -> String {
        let mut buf = [0 as c_char; 256];
        // SAFETY: buf is writable for its length.
        unsafe { mmu_last_error(buf.as_mut_ptr(), buf.len() as u32) };
        // SAFETY: mmu_last_error NUL-terminated it.
        unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn bad_calls_get_their_code_and_a_message() {
        let small = c"small-smoke";
        // SAFETY: every pointer below is NULL, a C string literal or the live handle `h`.
        unsafe {
            assert!(mmu_new(small.as_ptr(), 7, 0, 2).is_null());
            assert_eq!(last_error(), "mode: 7; allowed: 0 (follow), 1 (lockstep)");
            assert!(mmu_new(std::ptr::null(), 0, 0, 2).is_null());
            assert_eq!(last_error(), "scenario: NULL");
            assert_eq!(mmu_finish(std::ptr::null_mut()), MMU_ERR_NULL);
            assert_eq!(mmu_errors(std::ptr::null()), 0);

            let h = mmu_new(small.as_ptr(), MMU_MODE_FOLLOW, MMU_LINE_RATE_SCENARIO, 2);
            assert!(!h.is_null(), "{}", last_error());
            assert_eq!(mmu_pfc(h, 0, 0, 0, 1, 2), MMU_ERR_INPUT);
            assert_eq!(last_error(), "pfc.dir: 2; allowed: 0 (sent), 1 (received)");
            assert_eq!(mmu_drop(h, 0, 0, 1, 0, c"full".as_ptr()), MMU_ERR_INPUT);
            assert!(
                last_error().starts_with("line 1: drop.reason: \"full\"; allowed: "),
                "{}",
                last_error()
            );
            assert_eq!(mmu_finish(h), 0);
            assert!(mmu_error_text(h, 0).is_null());
            assert_eq!(
                mmu_error_message(h, 0, std::ptr::null_mut(), 0),
                MMU_ERR_NULL
            );
            mmu_free(h);
        }
    }

    #[test]
    fn a_meta_that_disagrees_with_the_scenario_is_a_warning() {
        let dut = c"small-smoke";
        // SAFETY: every pointer below is a C string literal or the live handle `h`.
        unsafe {
            let h = mmu_new(dut.as_ptr(), MMU_MODE_FOLLOW, MMU_LINE_RATE_SCENARIO, 2);
            assert!(!h.is_null(), "{}", last_error());
            assert_eq!(mmu_meta(h, c"{\"ports\":99}".as_ptr()), 1);
            assert_eq!(mmu_warnings(h), 1);
            let w = CStr::from_ptr(mmu_warning_text(h, 0)).to_str().unwrap();
            assert!(w.starts_with("the stream's meta says ports 99, "), "{w}");
            assert!(mmu_warning_text(h, 1).is_null());
            assert_eq!(mmu_meta(h, c"[1]".as_ptr()), MMU_ERR_INPUT);
            assert!(
                last_error().starts_with("meta.params: "),
                "{}",
                last_error()
            );
            mmu_free(h);
            let h = mmu_new(dut.as_ptr(), MMU_MODE_FOLLOW, MMU_LINE_RATE_SCENARIO, 2);
            assert_eq!(
                mmu_meta(h, c"{\"seed_note\":1}".as_ptr()),
                0,
                "{}",
                last_error()
            );
            assert_eq!(mmu_warnings(h), 0);
            mmu_free(h);
        }
    }

    #[test]
    fn a_payload_crc_that_changed_is_a_divergence() {
        let dut = c"small-smoke";
        for (sent, seen, found) in [(7, 7, 0), (7, 8, 1)] {
            // SAFETY: every pointer below is a C string literal or the live handle `h`.
            unsafe {
                let h = mmu_new_decisions(
                    dut.as_ptr(),
                    MMU_MODE_FOLLOW,
                    MMU_LINE_RATE_SCENARIO,
                    2,
                    MMU_DECISIONS_INFERRED,
                );
                assert!(!h.is_null(), "{}", last_error());
                assert_eq!(mmu_arrive_crc(h, 1, 0, 0, 1, 0, 64, 1, 1, sent), 0);
                assert!(mmu_depart_crc(h, 40, 1, 0, 1, 0, 0, 1, seen) >= 0);
                assert!(mmu_finish(h) >= 0, "{}", last_error());
                assert_eq!(mmu_errors(h), found);
                if found > 0 {
                    assert_eq!(CStr::from_ptr(mmu_error_check(h, 0)), c"payload");
                    assert_eq!(mmu_error_cycle(h, 0), 40);
                }
                mmu_free(h);
            }
        }
    }

    #[test]
    fn a_message_is_cut_to_the_buffer_and_its_length_returned() {
        let text = c"cycle 479: admission";
        let mut buf = [1 as c_char; 8];
        // SAFETY: buf is writable for its length.
        let n = unsafe { copy_out(text, buf.as_mut_ptr(), buf.len() as u32) };
        assert_eq!(n, 20);
        // SAFETY: copy_out NUL-terminated it.
        assert_eq!(unsafe { CStr::from_ptr(buf.as_ptr()) }, c"cycle 4");
    }
}
