//! Helpers for tests that need a wheel: zips built by hand.

use std::io::Write;

use flate2::write::DeflateEncoder;
use flate2::{Compression, Crc};

use crate::zip::{CENTRAL_SIGNATURE, EOCD_SIGNATURE, LOCAL_SIGNATURE};

/// Builds a zip by hand: each entry is (name, data, deflate?).
pub fn build_zip(entries: &[(&str, &[u8], bool)], comment: &[u8]) -> Vec<u8> {
    let with_modes: Vec<_> = entries
        .iter()
        .map(|&(name, data, deflate)| (name, data, deflate, None))
        .collect();
    build_zip_with_modes(&with_modes, comment)
}

/// Builds a zip by hand: each entry is (name, data, deflate?, Unix mode);
/// an entry with a mode is marked as made on Unix.
pub fn build_zip_with_modes(
    entries: &[(&str, &[u8], bool, Option<u32>)],
    comment: &[u8],
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data, deflate, mode) in entries {
        let mut crc = Crc::new();
        crc.update(data);
        let stored: Vec<u8> = if *deflate {
            let mut enc = DeflateEncoder::new(Vec::new(), Compression::default());
            enc.write_all(data).unwrap();
            enc.finish().unwrap()
        } else {
            data.to_vec()
        };
        let method: u16 = if *deflate { 8 } else { 0 };
        let offset = out.len() as u32;
        // Local header, with a 4-byte extra field the central directory
        // does not have, to check the reader uses the local lengths.
        out.extend_from_slice(&LOCAL_SIGNATURE.to_le_bytes());
        out.extend_from_slice(&20u16.to_le_bytes()); // version needed
        out.extend_from_slice(&0u16.to_le_bytes()); // flags
        out.extend_from_slice(&method.to_le_bytes());
        out.extend_from_slice(&[0; 4]); // time, date
        out.extend_from_slice(&crc.sum().to_le_bytes());
        out.extend_from_slice(&(stored.len() as u32).to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&4u16.to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&[0xCA, 0xFE, 0, 0]);
        out.extend_from_slice(&stored);

        central.extend_from_slice(&CENTRAL_SIGNATURE.to_le_bytes());
        let made_by: u16 = if mode.is_some() { 0x0314 } else { 20 };
        central.extend_from_slice(&made_by.to_le_bytes()); // made by
        central.extend_from_slice(&20u16.to_le_bytes()); // needed
        central.extend_from_slice(&0u16.to_le_bytes()); // flags
        central.extend_from_slice(&method.to_le_bytes());
        central.extend_from_slice(&[0; 4]);
        central.extend_from_slice(&crc.sum().to_le_bytes());
        central.extend_from_slice(&(stored.len() as u32).to_le_bytes());
        central.extend_from_slice(&(data.len() as u32).to_le_bytes());
        central.extend_from_slice(&(name.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0; 4]); // extra, comment lengths
        central.extend_from_slice(&[0; 4]); // disk, internal attrs
        central.extend_from_slice(&(mode.unwrap_or(0) << 16).to_le_bytes()); // external
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_offset = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(&EOCD_SIGNATURE.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&(comment.len() as u16).to_le_bytes());
    out.extend_from_slice(comment);
    out
}
