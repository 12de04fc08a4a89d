//! A small zip reader: enough for a Python wheel.
//!
//! It reads the end-of-central-directory record (searched backwards from the
//! end, past an optional comment), then the central directory, which is the
//! authoritative list of entries; each entry's data is found through its
//! local header. Stored (0) and deflated (8) entries are supported, and each
//! extracted entry's CRC-32 and size are checked. Zip64, encryption and
//! multi-disk archives are refused with a clear error.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use flate2::read::DeflateDecoder;
use flate2::Crc;

use crate::FetchError;

pub(crate) const EOCD_SIGNATURE: u32 = 0x0605_4b50;
pub(crate) const CENTRAL_SIGNATURE: u32 = 0x0201_4b50;
pub(crate) const LOCAL_SIGNATURE: u32 = 0x0403_4b50;
const EOCD_LEN: usize = 22;
const CENTRAL_LEN: usize = 46;
const LOCAL_LEN: usize = 30;

/// One entry of the central directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZipEntry {
    /// The entry's path inside the archive, `/`-separated.
    pub name: String,
    /// 0 = stored, 8 = deflated.
    pub method: u16,
    pub crc32: u32,
    pub compressed_size: u64,
    pub size: u64,
    /// The Unix mode (type and permission bits) when a Unix tool made the
    /// archive and recorded one, else `None`.
    pub unix_mode: Option<u32>,
    flags: u16,
    local_header_offset: u64,
}

/// An open zip archive.
pub struct ZipArchive {
    path: PathBuf,
    file: File,
    entries: Vec<ZipEntry>,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl ZipArchive {
    /// Opens `path` and reads its central directory.
    pub fn open(path: &Path) -> Result<Self, FetchError> {
        let bad = |reason: String| FetchError::BadArchive {
            path: path.to_path_buf(),
            reason,
        };
        let io_err = |e| FetchError::io("cannot read", path, e);
        let mut file = File::open(path).map_err(io_err)?;
        let len = file.metadata().map_err(io_err)?.len();
        if len < EOCD_LEN as u64 {
            return Err(bad(format!("{len} bytes is too short for a zip")));
        }
        // The record is 22 bytes plus a comment of at most 65535 bytes.
        let tail_len = len.min((EOCD_LEN + 65_535) as u64) as usize;
        let mut tail = vec![0; tail_len];
        file.seek(SeekFrom::Start(len - tail_len as u64))
            .map_err(io_err)?;
        file.read_exact(&mut tail).map_err(io_err)?;
        let eocd = (0..=tail_len - EOCD_LEN)
            .rev()
            .find(|&i| {
                u32_at(&tail, i) == EOCD_SIGNATURE
                    && i + EOCD_LEN + u16_at(&tail, i + 20) as usize == tail_len
            })
            .ok_or_else(|| bad("no end-of-central-directory record".into()))?;
        let e = &tail[eocd..];
        if u16_at(e, 4) != 0 || u16_at(e, 6) != 0 {
            return Err(bad("multi-disk archives are not supported".into()));
        }
        let count = u16_at(e, 10) as usize;
        let cd_size = u32_at(e, 12) as u64;
        let cd_offset = u32_at(e, 16) as u64;
        if count == 0xFFFF || cd_size == 0xFFFF_FFFF || cd_offset == 0xFFFF_FFFF {
            return Err(bad("zip64 archives are not supported".into()));
        }
        if cd_offset + cd_size > len {
            return Err(bad(format!(
                "central directory at {cd_offset}+{cd_size} is past the end ({len})"
            )));
        }
        let mut cd = vec![0; cd_size as usize];
        file.seek(SeekFrom::Start(cd_offset)).map_err(io_err)?;
        file.read_exact(&mut cd).map_err(io_err)?;

        let mut entries = Vec::with_capacity(count);
        let mut at = 0;
        for n in 0..count {
            if at + CENTRAL_LEN > cd.len() || u32_at(&cd, at) != CENTRAL_SIGNATURE {
                return Err(bad(format!("central directory entry {n} is damaged")));
            }
            let h = &cd[at..];
            let name_len = u16_at(h, 28) as usize;
            let extra_len = u16_at(h, 30) as usize;
            let comment_len = u16_at(h, 32) as usize;
            let end = at + CENTRAL_LEN + name_len;
            if end > cd.len() {
                return Err(bad(format!("central directory entry {n} is cut short")));
            }
            let name = String::from_utf8_lossy(&cd[at + CENTRAL_LEN..end]).into_owned();
            // The upper byte of "version made by" is the host system; 3 is
            // Unix, whose external attributes carry the mode in the high half.
            let unix_mode = (u16_at(h, 4) >> 8 == 3)
                .then(|| u32_at(h, 38) >> 16)
                .filter(|&m| m != 0);
            entries.push(ZipEntry {
                unix_mode,
                flags: u16_at(h, 8),
                method: u16_at(h, 10),
                crc32: u32_at(h, 16),
                compressed_size: u32_at(h, 20) as u64,
                size: u32_at(h, 24) as u64,
                local_header_offset: u32_at(h, 42) as u64,
                name,
            });
            at = end + extra_len + comment_len;
        }
        Ok(ZipArchive {
            path: path.to_path_buf(),
            file,
            entries,
        })
    }

    /// The entries, in central-directory order.
    pub fn entries(&self) -> &[ZipEntry] {
        &self.entries
    }

    /// Decompresses entry `index` into `out`, checking its size and CRC-32.
    pub fn extract(&mut self, index: usize, out: &mut dyn Write) -> Result<(), FetchError> {
        let entry = self.entries[index].clone();
        let path = self.path.clone();
        let bad = |reason: String| FetchError::BadArchive {
            path: path.clone(),
            reason: format!("entry {}: {reason}", entry.name),
        };
        let io_err = |e| FetchError::io("cannot read", &path, e);
        if entry.flags & 1 != 0 {
            return Err(bad("encrypted entries are not supported".into()));
        }
        let mut local = [0u8; LOCAL_LEN];
        self.file
            .seek(SeekFrom::Start(entry.local_header_offset))
            .map_err(io_err)?;
        self.file.read_exact(&mut local).map_err(io_err)?;
        if u32_at(&local, 0) != LOCAL_SIGNATURE {
            return Err(bad("no local header where the directory points".into()));
        }
        // The local header's name and extra field may differ in length from
        // the central directory's, so the data offset comes from here.
        let skip = u16_at(&local, 26) as i64 + u16_at(&local, 28) as i64;
        self.file.seek(SeekFrom::Current(skip)).map_err(io_err)?;
        let raw = (&mut self.file).take(entry.compressed_size);
        let mut reader: Box<dyn Read + '_> = match entry.method {
            0 => Box::new(raw),
            8 => Box::new(DeflateDecoder::new(raw)),
            m => return Err(bad(format!("compression method {m} is not supported"))),
        };
        let mut checked = CrcWriter {
            inner: out,
            crc: Crc::new(),
        };
        let written = io::copy(&mut reader, &mut checked).map_err(|e| {
            if e.kind() == io::ErrorKind::InvalidInput || e.kind() == io::ErrorKind::InvalidData {
                bad(format!("corrupt data: {e}"))
            } else {
                FetchError::io("cannot extract from", &path, e)
            }
        })?;
        if written != entry.size {
            return Err(bad(format!(
                "{written} bytes extracted, the directory says {}",
                entry.size
            )));
        }
        if checked.crc.sum() != entry.crc32 {
            return Err(bad(format!(
                "CRC-32 {:08x}, the directory says {:08x}",
                checked.crc.sum(),
                entry.crc32
            )));
        }
        Ok(())
    }
}

/// Passes bytes through while computing their CRC-32.
struct CrcWriter<'a> {
    inner: &'a mut dyn Write,
    crc: Crc,
}

impl Write for CrcWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::build_zip;

    /// `bytes` written to a file named `name` in a directory removed when
    /// the guard drops.
    fn temp_file(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        (dir, path)
    }

    #[test]
    fn reads_stored_and_deflated_entries() {
        let text = b"hello hello hello hello hello, zip!".repeat(20);
        let bytes = build_zip(
            &[
                ("a/stored.txt", b"plain bytes", false),
                ("a/b/deflated.txt", &text, true),
            ],
            b"a comment",
        );
        let (_tmp, path) = temp_file("ok.zip", &bytes);
        let mut zip = ZipArchive::open(&path).unwrap();
        let names: Vec<_> = zip.entries().iter().map(|e| e.name.clone()).collect();
        assert_eq!(names, ["a/stored.txt", "a/b/deflated.txt"]);
        assert_eq!(zip.entries()[1].method, 8);
        assert!(zip.entries()[1].compressed_size < text.len() as u64);
        let mut out = Vec::new();
        zip.extract(0, &mut out).unwrap();
        assert_eq!(out, b"plain bytes");
        out.clear();
        zip.extract(1, &mut out).unwrap();
        assert_eq!(out, text);
    }

    #[test]
    fn detects_corruption_and_garbage() {
        let mut bytes = build_zip(&[("x.txt", b"0123456789abcdef", false)], b"");
        // Flip a data byte (after the 30-byte header, 5-byte name, 4-byte extra).
        bytes[30 + 5 + 4 + 3] ^= 0xFF;
        let (_tmp, path) = temp_file("bad-crc.zip", &bytes);
        let mut zip = ZipArchive::open(&path).unwrap();
        let err = zip.extract(0, &mut Vec::new()).unwrap_err().to_string();
        assert!(err.contains("CRC-32"), "{err}");

        let (_tmp, path) = temp_file("garbage.zip", &[7u8; 100]);
        let err = ZipArchive::open(&path).err().unwrap().to_string();
        assert!(err.contains("no end-of-central-directory"), "{err}");
    }
}
