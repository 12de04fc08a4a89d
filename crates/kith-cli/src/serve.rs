//! `kith serve` and `kith mcp`: configuration from flags and environment,
//! then the kith-server crate does the rest.

use std::io::Write;
use std::sync::Arc;

use anyhow::{Context, Result};
use kith::OwnerId;
use kith_server::mcp::source::MemorySource;
use kith_server::reload::KeyLoader;
use kith_server::worker::WorkerConfig;
use kith_server::{ApiKeys, Auth, Limits, ServeOptions};

use crate::args::{Cli, ServeArgs};
use crate::cmd::{configure, identity_options, open};

/// The pack, with the environment's extraction provider and identity
/// options, and work a crashed process left behind resumed.
fn open_memory(cli: &Cli) -> Result<kith::Memory> {
    let memory = configure(open(cli)?)?.with_identity(identity_options(cli)?);
    let resumed = memory.resume_interrupted(None)?;
    if resumed.taken > 0 {
        eprintln!(
            "resumed {} interrupted extraction(s): {} complete, {} failed",
            resumed.taken, resumed.completed, resumed.failed
        );
    }
    Ok(memory)
}

/// Keys from `KITH_API_KEYS` and `--keys-file` (both may be given; a
/// source given without a key is an error, see [`ApiKeys::from_sources`]).
fn read_keys(a: &ServeArgs) -> Result<ApiKeys> {
    let env = std::env::var_os("KITH_API_KEYS")
        .map(|v| {
            v.into_string()
                .map_err(|_| anyhow::anyhow!("KITH_API_KEYS is not valid UTF-8"))
        })
        .transpose()?;
    Ok(ApiKeys::from_sources(
        env.as_deref(),
        a.keys_file.as_deref(),
    )?)
}

/// The timeouts and connection limit from flags and environment.
fn limits(a: &ServeArgs) -> Result<Limits> {
    let limits = Limits {
        header_read_timeout: std::time::Duration::from_secs(a.header_timeout),
        body_read_timeout: std::time::Duration::from_secs(a.body_timeout),
        idle_timeout: std::time::Duration::from_secs(a.idle_timeout),
        max_connections: a.max_connections,
    };
    limits.validate()?;
    Ok(limits)
}

/// `kith serve`.
pub fn serve(cli: &Cli, a: &ServeArgs) -> Result<()> {
    let keys = read_keys(a)?;
    let limits = limits(a)?;
    let auth = if keys.is_empty() {
        Auth::Open {
            default_owner: OwnerId::new(&cli.owner)?,
        }
    } else {
        Auth::Keys(keys)
    };
    // Refuse a public bind before opening anything.
    auth.check_bind(&a.bind)?;
    let mode = match &auth {
        Auth::Keys(k) => format!("{} API key(s)", k.len()),
        Auth::Open { default_owner } => format!(
            "no API keys: loopback only, owner from X-Kith-Owner or {:?}",
            default_owner.as_str()
        ),
    };
    let worker = if a.no_worker {
        None
    } else {
        Some(
            WorkerConfig::from_lookup(|name| std::env::var(name).ok())
                .map_err(anyhow::Error::msg)?,
        )
    };
    // SIGHUP reads the keys again, from the same places.
    let reload_keys: Option<KeyLoader> = match &auth {
        Auth::Keys(_) => {
            let args = a.clone();
            Some(Arc::new(move || {
                read_keys(&args).map_err(|e| crate::error_line(&e))
            }))
        }
        Auth::Open { .. } => None,
    };
    let memory = open_memory(cli)?;
    let options = ServeOptions {
        worker,
        reload_keys,
        limits,
    };
    kith_server::run_http(memory, a.bind, auth, options, |addr| {
        // One line on stdout, so scripts (and `kith bench http`) can read
        // the port when --bind asked for port 0.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "kith: listening on http://{addr} ({mode}); web console: http://{addr}/ui"
        );
        let _ = out.flush();
    })
    .context("kith serve")
}

/// `kith mcp`.
pub fn mcp(cli: &Cli) -> Result<()> {
    let owner = match std::env::var("KITH_MCP_OWNER") {
        Ok(o) if !o.trim().is_empty() => o,
        _ => cli.owner.clone(),
    };
    let owner =
        OwnerId::new(&owner).with_context(|| format!("KITH_MCP_OWNER={owner:?} is not valid"))?;
    // Settings errors end the process (they are the operator's to fix
    // before starting); a pack that cannot be opened does not: an MCP
    // client would only show "server failed", so each tool call says why
    // instead, and the next call tries again.
    let identity = identity_options(cli)?;
    let (pack, database_url) = (cli.pack.clone(), cli.database_url.clone());
    let opener = move || -> Result<kith::Memory> {
        let memory = match &database_url {
            Some(url) => kith::Memory::connect(url)?,
            None => kith::Memory::open(&pack)?,
        };
        let retention = kith::retrieve::retention::ReceiptRetention::from_env()?;
        let memory = configure(memory.with_receipt_retention(retention))?.with_identity(identity);
        let resumed = memory.resume_interrupted(None)?;
        if resumed.taken > 0 {
            eprintln!(
                "resumed {} interrupted extraction(s): {} complete, {} failed",
                resumed.taken, resumed.completed, resumed.failed
            );
        }
        Ok(memory)
    };
    let source = match opener() {
        Ok(memory) => MemorySource::open(std::sync::Arc::new(memory)),
        Err(e) => {
            let why = crate::error_line(&e);
            eprintln!("kith mcp: the memory cannot be opened ({why}); each tool call will say so");
            MemorySource::lazy(Box::new(move || {
                opener().map_err(|e| crate::error_line(&e))
            }))
        }
    };
    kith_server::run_mcp(source, owner).context("kith mcp")
}
