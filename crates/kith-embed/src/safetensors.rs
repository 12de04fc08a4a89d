//! A reader for the safetensors format, F32 tensors only.
//!
//! The format: an 8-byte little-endian header length `n`, then `n` bytes of
//! JSON mapping each tensor name to `{"dtype", "shape", "data_offsets":
//! [begin, end]}` (offsets relative to the end of the header; an optional
//! `__metadata__` entry holds strings), then the raw little-endian data.
//! The file is read once; tensors are copied out as `Vec<f32>`.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::EmbedError;

/// The largest header accepted (100 MB, as the reference implementation).
const MAX_HEADER_BYTES: u64 = 100_000_000;

/// One tensor: its shape and its values in row-major order.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// The dimensions, outermost first.
    pub shape: Vec<usize>,
    /// The values, `shape.iter().product()` of them.
    pub data: Vec<f32>,
}

/// The contents of a safetensors file.
#[derive(Debug)]
pub struct SafeTensors {
    path: PathBuf,
    bytes: Vec<u8>,
    /// Where the data section starts in `bytes`.
    data_start: usize,
    entries: HashMap<String, Entry>,
}

#[derive(Debug, Clone)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    begin: usize,
    end: usize,
}

impl SafeTensors {
    /// Reads and parses the file at `path`.
    pub fn read(path: &Path) -> Result<Self, EmbedError> {
        let bytes = fs::read(path).map_err(|e| EmbedError::io("cannot read", path, e))?;
        Self::parse(path, bytes)
    }

    /// Parses safetensors `bytes`; `path` is only used in error messages.
    pub fn parse(path: &Path, bytes: Vec<u8>) -> Result<Self, EmbedError> {
        let bad = |reason: String| EmbedError::bad_file(path, reason);
        let len_bytes: [u8; 8] = bytes
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| bad("shorter than the 8-byte header length".into()))?;
        let header_len = u64::from_le_bytes(len_bytes);
        if header_len > MAX_HEADER_BYTES || header_len > (bytes.len() - 8) as u64 {
            return Err(bad(format!(
                "header length {header_len} is impossible for a {}-byte file",
                bytes.len()
            )));
        }
        let data_start = 8 + header_len as usize;
        let header: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&bytes[8..data_start])
                .map_err(|e| bad(format!("header is not a JSON object: {e}")))?;
        let data_len = bytes.len() - data_start;
        let mut entries = HashMap::with_capacity(header.len());
        for (name, info) in header {
            if name == "__metadata__" {
                continue;
            }
            let dtype = info["dtype"]
                .as_str()
                .ok_or_else(|| bad(format!("tensor {name} has no dtype")))?
                .to_string();
            let shape = info["shape"]
                .as_array()
                .and_then(|a| {
                    a.iter()
                        .map(|d| d.as_u64().map(|d| d as usize))
                        .collect::<Option<Vec<_>>>()
                })
                .ok_or_else(|| bad(format!("tensor {name} has no valid shape")))?;
            let offsets = info["data_offsets"]
                .as_array()
                .filter(|a| a.len() == 2)
                .and_then(|a| Some((a[0].as_u64()? as usize, a[1].as_u64()? as usize)))
                .ok_or_else(|| bad(format!("tensor {name} has no valid data_offsets")))?;
            let (begin, end) = offsets;
            if begin > end || end > data_len {
                return Err(bad(format!(
                    "tensor {name} has data_offsets [{begin}, {end}] outside the {data_len}-byte data"
                )));
            }
            entries.insert(
                name,
                Entry {
                    dtype,
                    shape,
                    begin,
                    end,
                },
            );
        }
        Ok(SafeTensors {
            path: path.to_path_buf(),
            bytes,
            data_start,
            entries,
        })
    }

    /// The names of all tensors, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.entries.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// Copies out the F32 tensor `name`, checking its shape is `shape`.
    pub fn tensor(&self, name: &str, shape: &[usize]) -> Result<Tensor, EmbedError> {
        let bad = |reason: String| EmbedError::bad_file(&self.path, reason);
        let entry = self
            .entries
            .get(name)
            .ok_or_else(|| bad(format!("has no tensor {name}")))?;
        if entry.dtype != "F32" {
            return Err(bad(format!(
                "tensor {name} is {}, only F32 is supported",
                entry.dtype
            )));
        }
        if entry.shape != shape {
            return Err(bad(format!(
                "tensor {name} has shape {:?}, expected {shape:?}",
                entry.shape
            )));
        }
        let count: usize = shape.iter().product();
        if entry.end - entry.begin != count * 4 {
            return Err(bad(format!(
                "tensor {name} has {} bytes for {count} F32 values",
                entry.end - entry.begin
            )));
        }
        let raw = &self.bytes[self.data_start + entry.begin..self.data_start + entry.end];
        let data = raw
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Ok(Tensor {
            shape: shape.to_vec(),
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(data);
        bytes
    }

    #[test]
    fn reads_f32_tensors() {
        let mut data = Vec::new();
        for v in [1.0f32, -2.5, 3.0, 0.25, 7.0] {
            data.extend_from_slice(&v.to_le_bytes());
        }
        let header = r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[1],"data_offsets":[16,20]}}"#;
        let st = SafeTensors::parse(Path::new("t.safetensors"), file(header, &data)).unwrap();
        assert_eq!(st.names(), vec!["a", "b"]);
        assert_eq!(
            st.tensor("a", &[2, 2]).unwrap().data,
            vec![1.0, -2.5, 3.0, 0.25]
        );
        assert_eq!(st.tensor("b", &[1]).unwrap().data, vec![7.0]);
        let e = st.tensor("a", &[4]).unwrap_err().to_string();
        assert!(e.contains("shape [2, 2], expected [4]"), "{e}");
        assert!(st.tensor("c", &[1]).is_err());
    }

    #[test]
    fn refuses_bad_files() {
        assert!(SafeTensors::parse(Path::new("x"), vec![1, 2]).is_err());
        let header = r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
        let e = SafeTensors::parse(Path::new("x"), file(header, &[0; 4])).unwrap_err();
        assert!(e.to_string().contains("outside"), "{e}");
        let header = r#"{"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}"#;
        let st = SafeTensors::parse(Path::new("x"), file(header, &[0; 4])).unwrap();
        assert!(st
            .tensor("a", &[2])
            .unwrap_err()
            .to_string()
            .contains("F16"));
    }
}
