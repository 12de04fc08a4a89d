//! Where the MCP tools get their memory: an open one, or a way to open it.
//!
//! An MCP client starts `kith mcp` itself and, when the process exits at
//! start-up, shows its user only a generic "server failed" message. So a
//! pack that cannot be opened (not created yet, a wrong path, an
//! unreachable database) does not stop the server: every tool call answers
//! `unavailable: <why, and what to do>`, and the next call tries again, so
//! running `kith init` fixes it without restarting the client.

use std::sync::{Arc, Mutex};

use kith::Memory;

/// Opens the memory; the error is a sentence for the user.
pub type Opener = Box<dyn Fn() -> Result<Memory, String> + Send + Sync>;

/// An open memory, or an opener tried on each call until it succeeds.
pub struct MemorySource {
    memory: Mutex<Option<Arc<Memory>>>,
    opener: Option<Opener>,
}

impl MemorySource {
    /// A memory that is already open.
    pub fn open(memory: Arc<Memory>) -> Self {
        MemorySource {
            memory: Mutex::new(Some(memory)),
            opener: None,
        }
    }

    /// A memory opened on first use (and retried after a failure).
    pub fn lazy(opener: Opener) -> Self {
        MemorySource {
            memory: Mutex::new(None),
            opener: Some(opener),
        }
    }

    /// The memory, opening it if needed; blocks (call it on the blocking
    /// pool). The error is the tool's refusal text.
    pub fn get(&self) -> Result<Arc<Memory>, String> {
        // A panic while opening cannot leave a half-set value behind, so a
        // poisoned lock's content is still good.
        let mut slot = self.memory.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = slot.as_ref() {
            return Ok(Arc::clone(m));
        }
        let opener = self
            .opener
            .as_ref()
            .ok_or_else(|| "unavailable: no memory is configured".to_string())?;
        let memory = Arc::new(opener().map_err(|why| format!("unavailable: {why}"))?);
        *slot = Some(Arc::clone(&memory));
        Ok(memory)
    }
}
