//! `kith`: the command-line tool.
//!
//! Architecture invariant: this is the only crate that knows clap, anyhow and
//! terminals. Every command is a thin call into the `kith` facade.

mod args;
mod bench;
mod bench_embed;
mod bench_extract;
mod bench_http;
mod bench_latency;
mod bench_recall;
mod bench_split;
mod claims;
mod cmd;
mod demo;
mod forget;
mod locomo;
mod organize;
mod render;
mod retrieve;
mod serve;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    restore_sigpipe();
    let cli = args::Cli::parse();
    // A server's access log is its main output: info unless asked otherwise.
    let serving = matches!(cli.command, args::Command::Serve(_));
    init_logging(cli.verbose.max(u8::from(serving)));
    match cmd::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {}", error_line(&err));
            ExitCode::FAILURE
        }
    }
}

/// One readable line: the error and its causes, joined by `: `, each said
/// once. Many errors already write their cause into their own message (a
/// `#[error("{0}")]` wrapper, `cannot listen on ADDR: {source}`), and
/// anyhow's `{:#}` would then print it again (`error: X: X`); a cause whose
/// text the line already holds adds nothing and is left out. A store
/// error's sentence already says what its backend's error (its source, kept
/// for programs) said, so the line ends there.
pub(crate) fn error_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if !text.is_empty() && !line.contains(&text) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
        if cause.is::<kith::StoreError>() {
            break;
        }
    }
    line
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("KITH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour codes only for a person's terminal, never into log files.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// Rust ignores SIGPIPE, so `kith … | head` would panic on the closed pipe.
/// A command-line tool should end quietly instead, as `cat` does.
#[cfg(unix)]
fn restore_sigpipe() {
    // SAFETY: called first thing in main, before any thread exists; SIG_DFL
    // is a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn restore_sigpipe() {}

#[cfg(test)]
mod tests {
    use super::error_line;

    /// Displays its source as its own message, as `#[error("{0}")]` does.
    #[derive(Debug)]
    struct Wrapper(std::io::Error);

    impl std::fmt::Display for Wrapper {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            self.0.fmt(f)
        }
    }

    impl std::error::Error for Wrapper {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn each_message_is_said_once() {
        let io = || std::io::Error::new(std::io::ErrorKind::AddrInUse, "address in use");
        // A wrapper that displays its source: once.
        let err = anyhow::Error::new(Wrapper(io())).context("kith serve");
        assert_eq!(error_line(&err), "kith serve: address in use");
        // Contexts that add something: all of them, in order.
        let err = anyhow::Error::new(io())
            .context("cannot listen on 127.0.0.1:1")
            .context("kith serve");
        assert_eq!(
            error_line(&err),
            "kith serve: cannot listen on 127.0.0.1:1: address in use"
        );
    }

    /// A store error keeps its backend's error as its source, but its own
    /// sentence already says it: the line ends with the store's sentence.
    #[test]
    fn a_store_error_ends_the_line() {
        let backend = std::io::Error::other("db error: ERROR: relation \"nodes\" does not exist");
        let store = kith::StoreError::new(
            kith::StoreErrorKind::Other,
            "PostgreSQL: relation \"nodes\" does not exist [SQLSTATE 42P01]",
        )
        .with_source(backend);
        let err = anyhow::Error::new(kith::Error::Store(store)).context("kith stats");
        assert_eq!(
            error_line(&err),
            "kith stats: PostgreSQL: relation \"nodes\" does not exist [SQLSTATE 42P01]"
        );
        // The backend's error is still there for a program to read.
        assert!(err.chain().any(|c| c.to_string().starts_with("db error")));
    }
}
