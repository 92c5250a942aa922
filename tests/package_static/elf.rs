//! What an ELF executable needs from the system that runs it, read from the file itself (not
//! from `file`, whose wording changes between versions): the program interpreter (the dynamic
//! loader named by PT_INTERP) and the libraries the loader must find (DT_NEEDED). A static
//! binary, static-pie included, has neither: its PT_DYNAMIC, if any, only relocates itself.

use std::path::Path;

const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;

/// An executable's dynamic dependencies.
#[derive(Debug)]
pub struct Dependencies {
    /// PT_INTERP's path, if it has one.
    pub interpreter: Option<String>,
    /// How many DT_NEEDED entries its dynamic section has.
    pub needed: usize,
}

impl Dependencies {
    pub fn none(&self) -> bool {
        self.interpreter.is_none() && self.needed == 0
    }
}

/// Reads `path`, a 64-bit little-endian ELF file (x86_64, aarch64), or panics saying why not.
pub fn dependencies(path: &Path) -> Dependencies {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let what = path.display();
    assert!(
        bytes.starts_with(b"\x7fELF") && bytes.get(4) == Some(&2) && bytes.get(5) == Some(&1),
        "{what}: not a 64-bit little-endian ELF file"
    );
    let u16_at = |at: usize| u16::from_le_bytes(bytes[at..at + 2].try_into().unwrap());
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    // The ELF header: e_phoff at 0x20, e_phentsize at 0x36, e_phnum at 0x38.
    let (table, entry_size, entries) = (u64_at(0x20), usize::from(u16_at(0x36)), u16_at(0x38));
    let mut found = Dependencies {
        interpreter: None,
        needed: 0,
    };
    for i in 0..usize::from(entries) {
        let header = table + i * entry_size;
        // p_type at 0, p_offset at 8, p_filesz at 32.
        let (kind, offset, size) = (u32_at(header), u64_at(header + 8), u64_at(header + 32));
        let contents = &bytes[offset..offset + size];
        match kind {
            PT_INTERP => {
                let path = contents.split(|b| *b == 0).next().unwrap_or_default();
                found.interpreter = Some(String::from_utf8_lossy(path).into_owned());
            }
            PT_DYNAMIC => {
                // (d_tag, d_val) pairs of 8 bytes each, up to DT_NULL.
                for entry in contents.chunks_exact(16) {
                    let tag = u64::from_le_bytes(entry[..8].try_into().unwrap());
                    match tag {
                        DT_NULL => break,
                        DT_NEEDED => found.needed += 1,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    found
}
