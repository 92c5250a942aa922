//! How a binary is linked, read from its ELF headers (as `readelf -l -d` shows them), so that
//! no test depends on `file` or binutils being installed: the program interpreter (the dynamic
//! loader a dynamically linked binary names), the count of shared libraries it needs, and the
//! CPU it was built for (e_machine). 64-bit little-endian only: the targets redlock ships for.

use std::path::Path;

/// What the program headers say of how a binary is linked.
#[derive(Debug, PartialEq, Eq)]
pub struct Linkage {
    /// PT_INTERP: the loader the kernel starts first (e.g. /lib64/ld-linux-x86-64.so.2).
    pub interpreter: Option<String>,
    /// How many DT_NEEDED entries the dynamic section has (shared libraries to load).
    pub needed: usize,
    /// e_machine: the CPU the code is for ([`EM_X86_64`], [`EM_AARCH64`]).
    pub machine: u16,
}

impl Linkage {
    /// Runs on a kernel alone: no loader, no library (a static or static-pie binary).
    pub fn is_static(&self) -> bool {
        self.interpreter.is_none() && self.needed == 0
    }

    /// The CPU as a target triple names it ("x86_64", "aarch64").
    pub fn cpu(&self) -> &'static str {
        match self.machine {
            EM_X86_64 => "x86_64",
            EM_AARCH64 => "aarch64",
            other => panic!("an ELF for machine {other}, which redlock is not built for"),
        }
    }
}

pub const EM_X86_64: u16 = 62;
pub const EM_AARCH64: u16 = 183;

const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;

/// Reads `path`'s linkage; panics with the reason when it is not a 64-bit little-endian ELF.
pub fn linkage(path: &Path) -> Linkage {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let fail = |why: &str| -> ! { panic!("{}: {why}", path.display()) };
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" || bytes[4] != 2 || bytes[5] != 1 {
        fail("not a 64-bit little-endian ELF file");
    }
    let u16_at = |at: usize| u16::from_le_bytes(bytes[at..at + 2].try_into().unwrap());
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    let (table, entry, count) = (
        u64_at(32) as usize,
        u16_at(54) as usize,
        u16_at(56) as usize,
    );
    if table + entry * count > bytes.len() || entry < 56 {
        fail("program header table out of bounds");
    }
    let mut linkage = Linkage {
        interpreter: None,
        needed: 0,
        machine: u16_at(18),
    };
    for header in (0..count).map(|i| table + i * entry) {
        let (offset, size) = (u64_at(header + 8) as usize, u64_at(header + 32) as usize);
        let Some(contents) = bytes.get(offset..offset + size) else {
            fail("segment out of bounds");
        };
        match u32_at(header) {
            PT_INTERP => {
                let name = contents.split(|&b| b == 0).next().unwrap_or_default();
                linkage.interpreter = Some(String::from_utf8_lossy(name).into_owned());
            }
            PT_DYNAMIC => {
                for tag in contents
                    .chunks_exact(16)
                    .map(|e| u64::from_le_bytes(e[..8].try_into().unwrap()))
                {
                    match tag {
                        DT_NULL => break,
                        DT_NEEDED => linkage.needed += 1,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    linkage
}
